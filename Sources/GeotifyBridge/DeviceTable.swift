import GeotifyCore

/// The devices a lane keeps, by name, each record in a slot of its own that stays its
/// own for as long as the device is kept (a slot freed by a device forgotten is given to
/// the next new one).
///
/// Why not a dictionary of records: a lane looks each position's device up twice, once
/// when it decodes a batch (to see whether a device comes twice in it, so its positions
/// are taken in timestamp order) and once when it evaluates the position, and a
/// dictionary's index does not survive the insertion of a new device in between. A slot
/// does: the first look-up's slot is the second's, checked by name, so each position
/// hashes its device's name once, and the batch needs no set of the names it has seen
/// (`markSeen`). Each slot also keeps the device's fences as the book in force gave
/// them (`fences(at:in:)`), so a position does not look them up by name again.
package struct DeviceTable: Sendable, Sequence {
    /// The slot of each device kept.
    private var slots: [String: Int] = [:]
    /// The records by slot; nil in a free slot.
    private var records: [DeviceRecord?] = []
    /// The device of each slot, nil in a free one: what tells a free slot, without
    /// copying a record out of `records` to see.
    private var names: [String?] = []
    /// The number of the batch that last saw each slot's device (`markSeen`).
    private var seenIn: [UInt64] = []
    /// Each slot's device's fences, as the book in force when they were looked up gave
    /// them.
    private var fences: [DeviceFences?] = []
    /// The number of the edition each slot's fences came from (`editionNumber` then).
    private var fencesFrom: [Int] = []
    /// The edition of the book the lane last looked fences up in, and its number here
    /// (counted from 1). Each slot keeps the number rather than the edition, so a
    /// position compares two integers instead of retaining and releasing the edition.
    private var edition: FenceBookEdition?
    private var editionNumber = 0
    /// The free slots.
    private var free: [Int] = []

    package init() {}

    /// How many devices are kept.
    package var count: Int { slots.count }

    /// The slot of `device`, nil when it is not kept.
    package func slot(of device: String) -> Int? {
        slots[device]
    }

    /// The slot `slot` if it still holds `device` (it may have been freed, or given to
    /// another device, since it was looked up); else `device`'s slot, if it is kept.
    package func slot(_ slot: Int?, stillOf device: String) -> Int? {
        if let slot, slot < names.count, names[slot] == device { return slot }
        return slots[device]
    }

    /// The record in `slot`, which must hold one. Changed in place through it; read, it
    /// copies the whole record (its strings and arrays retained), so the lane reads the
    /// fields it needs inside a change (`LaneCore.withRecord`).
    package subscript(slot slot: Int) -> DeviceRecord {
        get {
            guard let record = records[slot] else { preconditionFailure("DeviceTable: slot \(slot) is free") }
            return record
        }
        _modify {
            precondition(names[slot] != nil, "DeviceTable: slot \(slot) is free")
            yield &records[slot]!
        }
    }

    /// The record of `device`, nil when it is not kept; setting nil forgets the device.
    package subscript(device: String) -> DeviceRecord? {
        get { slots[device].flatMap { records[$0] } }
        set {
            if let record = newValue {
                insert(record, for: device)
            } else if let slot = slots.removeValue(forKey: device) {
                records[slot] = nil
                names[slot] = nil
                fences[slot] = nil
                free.append(slot)
            }
        }
    }

    /// Keeps `record` for `device` (replacing the one it had) and returns its slot.
    @discardableResult
    package mutating func insert(_ record: DeviceRecord, for device: String) -> Int {
        if let slot = slots[device] {
            records[slot] = record
            return slot
        }
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            records[slot] = record
            names[slot] = device
            seenIn[slot] = 0
        } else {
            slot = records.count
            records.append(record)
            names.append(device)
            seenIn.append(0)
            fences.append(nil)
            fencesFrom.append(0)
        }
        slots[device] = slot
        return slot
    }

    /// Notes that batch `batch` (a number never 0, one for each batch) has a position of
    /// the device in `slot`; returns whether it had one before.
    package mutating func markSeen(_ slot: Int, in batch: UInt64) -> Bool {
        if seenIn[slot] == batch { return true }
        seenIn[slot] = batch
        return false
    }

    /// The fences of the device in `slot` in `book`: those kept for the slot when they
    /// came from this edition of the book, else looked up by name (and kept).
    package mutating func fences(at slot: Int, in book: FenceBook) -> DeviceFences {
        if edition?.isSame(as: book.edition) != true {
            edition = book.edition
            editionNumber += 1
        }
        if fencesFrom[slot] == editionNumber, let kept = fences[slot] { return kept }
        guard let device = names[slot] else { preconditionFailure("DeviceTable: slot \(slot) is free") }
        let found = book.deviceFences(of: device)
        fences[slot] = found
        fencesFrom[slot] = editionNumber
        return found
    }

    /// Stage `stage` of `EvaluationLookahead` for the device in `slot`, from the fences
    /// kept for it: a hint, so a slot freed or given to another device since it was
    /// looked up, or fences of an earlier edition, cost a useless prefetch and nothing else.
    package func prefetch(_ stage: EvaluationLookahead.Stage, slot: Int) {
        // Unmanaged at once: a reference kept across the calls below would be retained,
        // a write to the very line `objects` asks for.
        guard slot < fences.count, let unmanaged = fences[slot].map(Unmanaged.passUnretained) else { return }
        switch stage {
        case .objects:
            EvaluationLookahead.objects(unmanaged)
            records.withUnsafeBufferPointer { records in
                EvaluationLookahead.place(UnsafeRawPointer(records.baseAddress.map { $0 + slot }), byteCount: MemoryLayout<DeviceRecord?>.stride)
            }
        case .tables:
            EvaluationLookahead.tables(
                unmanaged, entries: records[slot]?.state.fences.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } ?? nil)
        }
    }

    /// Lets go of every slot's fences: once another book is in force they are looked up
    /// again anyway, and an earlier book's need not stay in memory until then.
    package mutating func forgetFences() {
        for slot in fences.indices { fences[slot] = nil }
        edition = nil
    }

    /// Every device kept with its record, in no particular order.
    package func makeIterator() -> some IteratorProtocol<(key: String, value: DeviceRecord)> {
        var slots = self.slots.makeIterator()
        let records = records
        return AnyIterator {
            guard let (device, slot) = slots.next(), let record = records[slot] else { return nil }
            return (key: device, value: record)
        }
    }

    /// Every device kept with its slot, in no particular order.
    package var slotsByDevice: [String: Int] { slots }
}

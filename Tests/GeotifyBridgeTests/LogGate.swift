import Dispatch
import Synchronization

/// A log sink that holds the thread writing the first line that contains `text` until
/// `open()`. (The logger calls its sink under its lock: every other thread that logs
/// meanwhile waits too.)
final class LogGate: Sendable {
    private let text: String
    private let held = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)
    private let taken = Atomic(false)
    private let written = Mutex<[String]>([])

    init(holding text: String) {
        self.text = text
    }

    /// The lines written so far.
    var lines: [String] { written.withLock { $0 } }

    func write(_ line: String) {
        written.withLock { $0.append(line) }
        guard line.contains(text), !taken.exchange(true, ordering: .relaxed) else { return }
        held.signal()
        opened.wait()
    }

    /// Waits until a thread is held (10 s at most); says whether one is.
    func waitUntilHolding() -> Bool {
        held.wait(timeout: .now() + 10) == .success
    }

    /// Lets the held thread, and each that comes after, go on.
    func open() {
        opened.signal()
    }
}

import Dispatch
import Foundation
import GeotifyStore
import Testing

/// The state database's log is copied back into the database on the checkpointer's queue,
/// never inside a commit (`LogCheckpointer`), and nothing committed is lost either way.
@Suite("Checkpoints of the state database's log")
struct LogCheckpointerTests {
    let directory = TemporaryDirectory()

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test("commits leave the checkpoint to the checkpointer's queue; it copies the whole log back")
    func commitsLeaveTheCheckpointToItsQueue() throws {
        let checkpoints = DispatchQueue(label: "LogCheckpointerTests")
        checkpoints.suspend()
        let store = try StateStore(directory: directory.path, durability: .normal, checkpoints: checkpoints)
        let database = (directory.path as NSString).appendingPathComponent("state.sqlite")
        let before = size(database)

        // About 3 000 pages of log: three times the point where SQLite's own checkpoint,
        // run by the commit that crosses it, would have copied the log into the database.
        let message = OutboxMessage(topic: "geotify/event/a", payload: [UInt8](repeating: 7, count: 4_000), qos: 1, retain: false)
        for _ in 0..<300 {
            try store.save(devices: [], outbox: Array(repeating: message, count: 10))
        }
        #expect(size(database) == before, "no commit copied the log into the database")
        #expect(size(database + "-wal") > 2_500 * 4_096)

        checkpoints.resume()
        checkpoints.sync {}
        #expect(size(database) > 2_500 * 4_096, "the checkpointer copied the log back")
        #expect(try StateStore(directory: directory.path).pendingMessages().count == 3_000)
    }
}

import Testing
@testable import GeotifyBridge
import GeotifyStore

/// The previews a lane keeps until a commit or a cancel, as a value: past a cap, the
/// oldest makes room.
@Suite("Preview book")
struct PreviewBookTests {
    /// Past either cap (a device's, the lane's), the oldest preview goes, every time:
    /// each of twelve previews kept two at a time leaves exactly the last two. A copy of
    /// the book is asked, so asking takes nothing from it. (With the previews' order
    /// lost, the dictionary's order chose, and a run of three previews kept the right
    /// two half the time.)
    @Test(arguments: [(perDevice: 2, total: 100, devices: ["alice/phone"]), (perDevice: 100, total: 2, devices: ["alice/phone", "bob/phone"])])
    func eachPreviewPastACapDropsTheOldest(perDevice: Int, total: Int, devices: [String]) throws {
        var book = PreviewBook(timeout: 60, perDevice: perDevice, total: total)
        let device = { (number: Int) in devices[number % devices.count] }
        for number in 0..<12 {
            _ = book.add(
                token: "t\(number)", change: .delete(device: device(number), identifier: "home"), device: device(number), basis: [], now: 0)
            #expect(book.count == min(number + 1, 2))
            for older in 0...number {
                var probe = book
                let kept = (try? probe.take("t\(older)", device: device(older), now: 0)) != nil
                #expect(kept == (older >= number - 1), "after t\(number): t\(older)")
            }
        }
    }
}

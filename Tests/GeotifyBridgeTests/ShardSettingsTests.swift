import Foundation
import GeotifyTestSupport
import GeotifyBridge
import GeotifyCore
import Testing

/// The `shard` setting, from the settings file, `GEOTIFY_SHARD`, or a StatefulSet pod's
/// ordinal.
@Suite("Shard settings")
struct ShardSettingsTests {
    func load(_ text: String, environment: [String: String] = [:]) throws(SettingsError) -> Settings {
        let directory = temporaryDirectoryPath("shard-settings")
        let path = directory + "/geotify.json"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return try Settings.load(path: path, environment: environment)
    }

    @Test func theFileTheEnvironmentAndThePodName() throws {
        #expect(try load("{}").shard == nil)
        #expect(try load(#"{"shard": "1/3"}"#).shard == ShardAssignment(index: 1, count: 3))
        #expect(try load(#"{"shard": "1/3"}"#, environment: ["GEOTIFY_SHARD": "2/4"]).shard == ShardAssignment(index: 2, count: 4),
                "the environment overrides the file")
        #expect(try load("{}", environment: ["GEOTIFY_SHARD": "ordinal/3", "POD_NAME": "geotify-2", "HOSTNAME": "other-0"]).shard
                == ShardAssignment(index: 2, count: 3))
        #expect(try load(#"{"shard": "ordinal/3"}"#, environment: ["HOSTNAME": "geotify-1"]).shard == ShardAssignment(index: 1, count: 3))
        #expect(try load(#"{"shard": "ordinal/3"}"#, environment: ["POD_NAME": "", "HOSTNAME": "geotify-1"]).shard
                == ShardAssignment(index: 1, count: 3), "an empty POD_NAME (a downward API field not filled) falls back to HOSTNAME")
    }

    /// `ShardAssignment.podName(in:)` takes the first of POD_NAME and HOSTNAME that is set
    /// and not empty.
    @Test(arguments: [
        ([:], nil), (["POD_NAME": "a-1", "HOSTNAME": "b-2"], "a-1"), (["HOSTNAME": "b-2"], "b-2"),
        (["POD_NAME": "", "HOSTNAME": "b-2"], "b-2"), (["POD_NAME": "", "HOSTNAME": ""], nil),
    ] as [([String: String], String?)])
    func thePodNameFallsBackPastAnEmptyOne(environment: [String: String], expected: String?) {
        #expect(ShardAssignment.podName(in: environment) == expected)
    }

    @Test func aBadShardNamesWhereItCameFrom() {
        #expect(throws: SettingsError.self) { try load(#"{"shard": "3/3"}"#) }
        do {
            _ = try load("{}", environment: ["GEOTIFY_SHARD": "ordinal/3", "HOSTNAME": "laptop"])
            Issue.record("refused")
        } catch {
            #expect(error.message.contains("GEOTIFY_SHARD: \"ordinal/3\" takes the index from the pod name, but \"laptop\""), "\(error.message)")
        }
        do {
            _ = try load(#"{"shard": 3}"#)
            Issue.record("refused")
        } catch {
            #expect(error.message.contains("\"shard\""), "\(error.message)")
        }
    }
}

/// The one vocabulary of refusals and failures: every error Geotify reports carries one
/// of these codes, the same on `geotify/error`, in command replies, in the CLI's
/// messages, in the HTTP API and in the `errors.<code>` counters. The raw value is the
/// stable wire form.
public enum ErrorCode: String, Sendable, Hashable, CaseIterable {
    // Input that cannot be read.
    case emptyPayload = "empty_payload"
    case payloadTooLarge = "payload_too_large"
    case invalidJSON = "invalid_json"
    case notAnObject = "not_an_object"
    case missingField = "missing_field"
    case wrongType = "wrong_type"
    case outOfRange = "out_of_range"
    /// A key a fence or command does not know (a typo).
    case unknownKey = "unknown_key"
    /// A field given more than once in one object, or under both of its spellings
    /// (`lat` and `latitude`): which one was meant cannot be told.
    case duplicateField = "duplicate_field"
    /// A value that is not one Geotify accepts (an unknown event type, a bad polygon).
    case invalidValue = "invalid_value"
    case invalidTopic = "invalid_topic"
    /// A device the fence file does not name (with `strictDevices`), or that a change
    /// named but the file does not have.
    case unknownDevice = "unknown_device"
    case unknownAction = "unknown_action"
    case notAllowed = "not_allowed"
    case tooManyDevices = "too_many_devices"
    case unknownToken = "unknown_token"
    case expiredToken = "expired_token"
    /// A command the broker delivered as retained: stored with the retain flag, it is
    /// sent again at every subscription, so it would run again at every connection.
    case retainedCommand = "retained_command"

    // OwnTracks encrypted payloads (`{"_type":"encrypted","data":...}`).
    /// No secret applies to the device (`owntracksKeysFile`).
    case noDecryptionKey = "no_decryption_key"
    /// The envelope has no `data` string, or holds another envelope.
    case invalidEnvelope = "invalid_envelope"
    /// `data` is not standard base64.
    case invalidBase64 = "invalid_base64"
    /// The MAC does not match: a different secret on the device, or altered bytes.
    case undecryptable
    /// The decrypted bytes are not a JSON object.
    case decryptedNotJSON = "decrypted_not_json"

    // Changes to the fences.
    case unknownFence = "unknown_fence"
    case duplicateIdentifier = "duplicate_identifier"
    /// A device would have more than `maximumFencesPerDevice` fences, or the fence file
    /// (a fence directory: its files together) would be larger than `maximumFenceFileBytes`.
    case fenceLimit = "fence_limit"
    /// A device's fence changes kept the fence file being written for longer than
    /// `fenceWriteBudget` allows; nothing was written, and the message says when the next
    /// change may come.
    case rateLimited = "rate_limited"
    /// A device identifier that cannot be used (a wildcard, an empty topic level).
    case invalidDevice = "invalid_device"
    /// A device that a change would create under a name the fence file gives to shared
    /// fences: `shared` (every device's) or a group's name. Made by accident, such a
    /// device would hold fences meant to be shared.
    case reservedDevice = "reserved_device"
    /// A shared fence change for a group the fence file does not define in `groups`.
    case unknownGroup = "unknown_group"
    /// The fence file cannot be used as it stands, so it cannot be changed safely: it is
    /// missing, cannot be read (not a regular file, past `maximumFenceFileBytes`, refused
    /// by the system) or does not validate. Nothing was written.
    case invalidFile = "invalid_file"
    case invalidImport = "invalid_import"
    /// The fences cannot be changed by this bridge: several shards read one fence file,
    /// which none of them may write (a fence directory gives each device a file of its own).
    case readOnly = "read_only"
    /// A device another instance of the bridge owns (`shard`: instances share the devices
    /// by a hash of their ids): its positions and commands are for that instance.
    case otherShard = "other_shard"
    /// What a change was based on changed since it was read; nothing was written.
    case stale
    /// A file could not be written (a full disk, no permission), or one that is not the
    /// fence file (a file to import) could not be read.
    case io

    // Failures of the bridge itself, reported on `geotify/error`.
    /// The state database could not be written (a full or failing disk).
    case stateWrite = "state_write"
    /// The fence file in force was replaced by one that does not validate.
    case fenceFile = "fence_file"
    case connectionRefused = "connection_refused"
    /// Another client connected with the bridge's client id and took its session.
    case sessionTakenOver = "session_taken_over"
    case subscriptionRefused = "subscription_refused"
    case publish
    /// An MQTT 5 broker took a message sent at QoS 1 (a notification, an OwnTracks
    /// transition, the status) and refused it (a PUBACK with a reason of 0x80 or more:
    /// its access rules, a quota): it is not delivered.
    case publishRefused = "publish_refused"
    case publishQueueFull = "publish_queue_full"
    /// A message larger than the broker takes (`maximumPacketBytes`), which it would close
    /// the connection for: not published. A command's reply that would be is answered
    /// with this code (a `list` or `get`, which changed nothing) or without the fences it
    /// would have held.
    case messageTooLarge = "message_too_large"
    /// A notification could not be delivered to a target (webhook, push service, e-mail)
    /// within its retry time; it is in the dead letters.
    case deliveryFailed = "delivery_failed"
    /// A notification was not queued for a target: as many as its `maximumQueuedPerDevice`
    /// (of the notification's device) or `maximumQueued` were already waiting. It was
    /// published on MQTT all the same.
    case deliveryQueueFull = "delivery_queue_full"
}

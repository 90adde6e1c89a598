import GeotifyJSON

/// Home Assistant 2025.4's MQTT discovery schemas, written out from its sources
/// (`homeassistant/components/mqtt/`): which keys each platform accepts and what each
/// value must be, so the discovery tests check every payload key by key. Home Assistant
/// drops unknown keys of a discovery payload silently (`extra=vol.REMOVE_EXTRA`), so a
/// misspelt key would never show in its log; this table is what catches it.
///
/// Sources: `config.py` (`MQTT_BASE_SCHEMA`: qos, encoding; `MQTT_RO_SCHEMA`:
/// state_topic required, value_template), `schemas.py` (`MQTT_ENTITY_COMMON_SCHEMA`,
/// `_MQTT_AVAILABILITY_SCHEMA`, `MQTT_ENTITY_DEVICE_INFO_SCHEMA`,
/// `MQTT_ORIGIN_INFO_SCHEMA`), `device_tracker.py`, `sensor.py`, `binary_sensor.py`,
/// `button.py`, `event.py` (their `PLATFORM_SCHEMA_MODERN` / `DISCOVERY_SCHEMA`),
/// `util.py` (`valid_subscribe_topic`, `valid_publish_topic`, `valid_qos_schema`),
/// `helpers/config_validation.py` (`icon`, `configuration_url`, `positive_int`), and the
/// enums `EntityCategory`, `SourceType`, `SensorStateClass`, `SensorDeviceClass`,
/// `BinarySensorDeviceClass`, `ButtonDeviceClass`, `EventDeviceClass`, and
/// `sensor/const.py`'s `DEVICE_CLASS_UNITS` for the classes used.
enum HomeAssistantSchema {
    /// What a value must be.
    indirect enum Value {
        case string
        /// A string or JSON null (`vol.Any(cv.string, None)`).
        case optionalString
        case boolean
        /// An integer of at least 0 (`cv.positive_int`).
        case positiveInteger
        /// 0, 1 or 2.
        case qos
        /// One of the strings.
        case oneOf([String])
        /// One of the strings, or null.
        case optionalOneOf([String])
        /// A topic one can subscribe to: not empty, no NUL, `+` a whole level, `#` last.
        case subscribeTopic
        /// A topic one can publish to: no wildcards.
        case publishTopic
        /// A Jinja template (any string).
        case template
        /// `prefix:name`.
        case icon
        /// An `http`, `https` or `homeassistant` URL.
        case configurationURL
        case listOfStrings
        /// A list of two-string lists (a device's `connections`).
        case listOfPairs
        case availabilityList
        case device
        case origin
    }

    /// The keys every entity platform accepts (`MQTT_BASE_SCHEMA` and
    /// `MQTT_ENTITY_COMMON_SCHEMA` with `_MQTT_AVAILABILITY_SCHEMA`).
    static let common: [String: Value] = [
        "qos": .qos,
        "encoding": .string,
        "availability": .availabilityList,
        "availability_mode": .oneOf(["all", "any", "latest"]),
        "availability_template": .template,
        "availability_topic": .subscribeTopic,
        "payload_available": .string,
        "payload_not_available": .string,
        "device": .device,
        "entity_picture": .configurationURL,
        "origin": .origin,
        "enabled_by_default": .boolean,
        "entity_category": .oneOf(["config", "diagnostic"]),
        "icon": .icon,
        "json_attributes_topic": .subscribeTopic,
        "json_attributes_template": .template,
        "object_id": .string,
        "unique_id": .string,
    ]

    static let sensorDeviceClasses = [
        "date", "enum", "timestamp", "apparent_power", "aqi", "area", "atmospheric_pressure", "battery",
        "blood_glucose_concentration", "carbon_monoxide", "carbon_dioxide", "conductivity", "current", "data_rate",
        "data_size", "distance", "duration", "energy", "energy_distance", "energy_storage", "frequency", "gas", "humidity",
        "illuminance", "irradiance", "moisture", "monetary", "nitrogen_dioxide", "nitrogen_monoxide", "nitrous_oxide",
        "ozone", "ph", "pm1", "pm10", "pm25", "power_factor", "power", "precipitation", "precipitation_intensity",
        "pressure", "reactive_power", "signal_strength", "sound_pressure", "speed", "sulphur_dioxide", "temperature",
        "volatile_organic_compounds", "volatile_organic_compounds_parts", "voltage", "volume", "volume_storage",
        "volume_flow_rate", "water", "weight", "wind_direction", "wind_speed",
    ]
    static let binarySensorDeviceClasses = [
        "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door", "garage_door", "gas", "heat",
        "light", "lock", "moisture", "motion", "moving", "occupancy", "opening", "plug", "power", "presence", "problem",
        "running", "safety", "smoke", "sound", "tamper", "update", "vibration", "window",
    ]
    /// `DEVICE_CLASS_UNITS` of the sensor device classes Geotify uses.
    static let units: [String: Set<String>] = ["duration": ["d", "h", "min", "s", "ms", "μs"]]

    /// The platform's own keys and which of them are required.
    static func platform(_ component: String) -> (keys: [String: Value], required: Set<String>)? {
        switch component {
        case "device_tracker":
            return ([
                "state_topic": .subscribeTopic, "value_template": .template, "name": .optionalString,
                "payload_home": .string, "payload_not_home": .string, "payload_reset": .string,
                "source_type": .oneOf(["gps", "router", "bluetooth", "bluetooth_le"]),
            ], [])
        case "sensor":
            return ([
                "state_topic": .subscribeTopic, "value_template": .template,
                "device_class": .optionalOneOf(sensorDeviceClasses), "expire_after": .positiveInteger,
                "force_update": .boolean, "last_reset_value_template": .template, "name": .optionalString,
                "options": .listOfStrings, "suggested_display_precision": .positiveInteger,
                "state_class": .optionalOneOf(["measurement", "measurement_angle", "total", "total_increasing"]),
                "unit_of_measurement": .optionalString,
            ], ["state_topic"])
        case "binary_sensor":
            return ([
                "state_topic": .subscribeTopic, "value_template": .template,
                "device_class": .optionalOneOf(binarySensorDeviceClasses), "expire_after": .positiveInteger,
                "force_update": .boolean, "name": .optionalString, "off_delay": .positiveInteger,
                "payload_off": .string, "payload_on": .string,
            ], ["state_topic"])
        case "button":
            return ([
                "command_template": .template, "command_topic": .publishTopic,
                "device_class": .optionalOneOf(["identify", "restart", "update"]), "name": .optionalString,
                "payload_press": .string, "retain": .boolean,
            ], ["command_topic"])
        case "event":
            return ([
                "state_topic": .subscribeTopic, "value_template": .template,
                "device_class": .oneOf(["doorbell", "button", "motion"]), "name": .optionalString,
                "event_types": .listOfStrings,
            ], ["state_topic", "event_types"])
        default:
            return nil
        }
    }

    /// Every way `config`, the payload of a `component` discovery config, breaks the
    /// schema; empty when Home Assistant accepts it as it is.
    static func problems(_ component: String, _ config: JSONObject) -> [String] {
        guard let platform = platform(component) else { return ["\(component) is not a platform Geotify announces"] }
        var problems: [String] = []
        for key in platform.required where config[key] == nil {
            problems.append("missing required \(key)")
        }
        for member in config.members {
            guard let value = platform.keys[member.key] ?? common[member.key] else {
                problems.append("\(member.key) is not a key of \(component)")
                continue
            }
            problems += check(member.value, value).map { "\(member.key): \($0)" }
        }
        if config["availability"] != nil && config["availability_topic"] != nil {
            problems.append("availability and availability_topic exclude each other")
        }
        if component == "device_tracker" && config["state_topic"] == nil && config["json_attributes_topic"] == nil {
            problems.append("a device tracker needs state_topic or json_attributes_topic")
        }
        if ["sensor", "binary_sensor"].contains(component), config["entity_category"] == "config" {
            problems.append("a \(component) cannot have entity_category config")
        }
        if component == "sensor" {
            if config["last_reset_value_template"] != nil && config["state_class"] != "total" {
                problems.append("last_reset_value_template needs state_class total")
            }
            if config["options"] != nil && config["device_class"] != "enum" {
                problems.append("options needs device_class enum")
            }
            if let deviceClass = config["device_class"]?.stringValue, let unit = config["unit_of_measurement"]?.stringValue,
               let allowed = units[deviceClass], !allowed.contains(unit) {
                problems.append("unit \(unit) is not one of device class \(deviceClass)")
            }
        }
        return problems
    }

    private static func check(_ json: JSON, _ value: Value) -> [String] {
        switch (value, json) {
        case (.string, .string), (.template, .string), (.boolean, .bool), (.optionalString, .string), (.optionalString, .null):
            return []
        case (.positiveInteger, .number(let number)):
            return number >= 0 && number == number.rounded() ? [] : ["\(number) is not a positive integer"]
        case (.qos, .number(let number)):
            return [0, 1, 2].contains(number) ? [] : ["qos \(number) is not 0, 1 or 2"]
        case (.oneOf(let allowed), .string(let text)), (.optionalOneOf(let allowed), .string(let text)):
            return allowed.contains(text) ? [] : ["\(text) is not one of \(allowed)"]
        case (.optionalOneOf, .null):
            return []
        case (.subscribeTopic, .string(let topic)):
            return subscribeTopicProblems(topic)
        case (.publishTopic, .string(let topic)):
            return topic.isEmpty || topic.contains("+") || topic.contains("#") || topic.contains("\0") ? ["\(topic) is not a publish topic"] : []
        case (.icon, .string(let text)):
            return text.contains(":") ? [] : ["\(text) is not prefix:name"]
        case (.configurationURL, .string(let text)):
            return ["http://", "https://", "homeassistant://"].contains { text.hasPrefix($0) && text.count > $0.count }
                ? [] : ["\(text) is not an http, https or homeassistant URL"]
        case (.listOfStrings, .array(let elements)):
            return elements.allSatisfy { $0.stringValue != nil } ? [] : ["not a list of strings"]
        case (.listOfPairs, .array(let elements)):
            return elements.allSatisfy { $0.arrayValue?.count == 2 && $0.arrayValue?.allSatisfy { $0.stringValue != nil } == true }
                ? [] : ["not a list of pairs of strings"]
        case (.availabilityList, .array(let elements)):
            return elements.flatMap { element -> [String] in
                guard case .object(let entry) = element else { return ["an availability entry is not an object"] }
                let keys: [String: Value] = ["topic": .subscribeTopic, "payload_available": .string, "payload_not_available": .string, "value_template": .template]
                return (entry["topic"] == nil ? ["an availability entry needs a topic"] : [])
                    + entry.members.flatMap { member in
                        keys[member.key].map { check(member.value, $0) } ?? ["\(member.key) is not a key of an availability entry"]
                    }
            }
        case (.device, .object(let device)):
            let keys: [String: Value] = [
                "identifiers": .listOfStrings, "connections": .listOfPairs, "manufacturer": .string, "model": .string,
                "model_id": .string, "name": .string, "hw_version": .string, "serial_number": .string, "sw_version": .string,
                "via_device": .string, "suggested_area": .string, "configuration_url": .configurationURL,
            ]
            let identified = device["identifiers"]?.arrayValue?.isEmpty == false || device["connections"]?.arrayValue?.isEmpty == false
            return (identified ? [] : ["a device needs identifiers or connections"])
                + device.members.flatMap { member in
                    keys[member.key].map { check(member.value, $0).map { "device.\(member.key): \($0)" } } ?? ["device.\(member.key) is not a key of a device"]
                }
        case (.origin, .object(let origin)):
            let keys: [String: Value] = ["name": .string, "sw_version": .string, "support_url": .configurationURL]
            return (origin["name"] == nil ? ["an origin needs a name"] : [])
                + origin.members.flatMap { member in
                    keys[member.key].map { check(member.value, $0).map { "origin.\(member.key): \($0)" } } ?? ["origin.\(member.key) is not a key of an origin"]
                }
        default:
            return ["\(json.kindDescription) is not a \(value)"]
        }
    }

    private static func subscribeTopicProblems(_ topic: String) -> [String] {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        if topic.isEmpty || topic.contains("\0") { return ["\(topic) is not a topic"] }
        for (index, level) in levels.enumerated() {
            if level.contains("+") && level != "+" { return ["+ must be a whole level in \(topic)"] }
            if level.contains("#") && (level != "#" || index != levels.count - 1) { return ["# must be the last level in \(topic)"] }
        }
        return []
    }
}

"""The body of scripts/ha-check: a bridge, a mosquitto and a Home Assistant, driven through
the steps an OwnTracks and Home Assistant user goes through, with a table of every
Geotify entity's state after each. Run with Home Assistant's own Python (its venv has
paho-mqtt and aiohttp); see scripts/ha-check."""
import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

# Debian installs mosquitto in /usr/sbin, which is not on an ordinary user's PATH.
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(ROOT, ".build", "ha-check")

# Home Assistant's home in the tool's configuration.yaml: 52.52, 13.405, radius 100 m.
HOME = (52.52, 13.405)
SUPERMARKET = (52.5301, 13.4202)
SCHOOL = (52.5102, 13.3901)
FENCES = {
    "devices": {
        "alice/phone": [
            {"identifier": "supermarket", "name": "Supermarket", "rid": "a1b2c3", "latitude": SUPERMARKET[0], "longitude": SUPERMARKET[1],
             "radius": 100, "note": "Shopping?", "eventType": "onEntryAndExit"},
        ],
        "bob/phone": [],
    },
    "shared": [
        {"identifier": "home", "name": "Home", "latitude": HOME[0], "longitude": HOME[1], "radius": 150, "note": "Welcome home", "eventType": "onEntryAndExit"},
        {"identifier": "school", "name": "School", "latitude": SCHOOL[0], "longitude": SCHOOL[1], "radius": 200, "note": "At school", "eventType": "onEntryAndExit"},
    ],
}
# What the automations of docs/home-assistant.md need besides Geotify: a hall light.
EXTRA_CONFIGURATION = """
automation: !include automations.yaml
input_boolean:
  hall_power:
light:
  - platform: template
    lights:
      hall:
        friendly_name: Hall
        value_template: "{{ is_state('input_boolean.hall_power', 'on') }}"
        turn_on:
          action: input_boolean.turn_on
          target:
            entity_id: input_boolean.hall_power
        turn_off:
          action: input_boolean.turn_off
          target:
            entity_id: input_boolean.hall_power
"""


def automations():
    """The automations of docs/home-assistant.md: its YAML blocks that start with `- alias:`."""
    with open(os.path.join(ROOT, "docs", "home-assistant.md")) as f:
        text = f.read()
    blocks = re.findall(r"```yaml\n(- alias:.*?)```", text, re.DOTALL)
    return "".join(blocks)


class StateChanges:
    """Every `state_changed` event Home Assistant fires for `entities`, from a websocket
    subscription in a thread of its own, so a step's changes can be counted: Home
    Assistant fires one for every write of a changed state or attribute, which is what
    its history and automations see."""

    def __init__(self, ha, entities):
        self.ha = ha
        self.entities = set(entities)
        self.events = []  # (monotonic time, entity_id, old state, new state)
        self.lock = threading.Lock()
        self.subscribed = threading.Event()
        threading.Thread(target=asyncio.run, args=(self.watch(),), daemon=True).start()
        if not self.subscribed.wait(30):
            raise SystemExit("could not subscribe to Home Assistant's state_changed events")

    async def watch(self):
        import aiohttp
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(self.ha.BASE.replace("http", "ws") + "/api/websocket") as connection:
                await connection.receive_json()
                await connection.send_json({"type": "auth", "access_token": self.ha.token()})
                if (await connection.receive_json())["type"] != "auth_ok":
                    return
                await connection.send_json({"id": 1, "type": "subscribe_events", "event_type": "state_changed"})
                async for message in connection:
                    if message.type != aiohttp.WSMsgType.TEXT:
                        break
                    data = json.loads(message.data)
                    if data.get("type") == "result" and data.get("id") == 1:
                        self.subscribed.set()
                    if data.get("type") != "event":
                        continue
                    event = data["event"]["data"]
                    if event["entity_id"] in self.entities:
                        old, new = event.get("old_state") or {}, event.get("new_state") or {}
                        with self.lock:
                            self.events.append((time.monotonic(), event["entity_id"], old.get("state"), new.get("state")))

    def between(self, entity_id, start, end):
        """The changes of `entity_id` from `start` to `end` (monotonic times)."""
        with self.lock:
            return [(old, new) for at, entity, old, new in self.events if entity == entity_id and start <= at < end]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(what, predicate, timeout):
    """Polls `predicate` until it returns something true or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            print(f"  (timed out waiting for {what})", file=sys.stderr)
            return None
        time.sleep(0.25)


class Run:
    def __init__(self, args):
        self.args = args
        self.broker_port = free_port()
        self.ha_port = free_port()
        self.console_port = free_port()
        self.conf = os.path.join(WORK, "conf")
        os.environ["HA_CONF"] = self.conf
        os.environ["HA_PORT"] = str(self.ha_port)
        sys.path.insert(0, args.tools)
        import ha  # the tool's client, reading HA_CONF and HA_PORT
        self.ha = ha
        self.processes = {}
        self.clock = int(time.time())
        self.columns = []
        self.rows = {}
        self.failures = []
        self.changes = None
        self.step_started = time.monotonic()
        self.step_starts = []

    # processes

    def start_broker(self):
        config = os.path.join(WORK, "mosquitto.conf")
        with open(config, "w") as f:
            f.write(f"listener {self.broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        self.processes["mosquitto"] = subprocess.Popen([MOSQUITTO, "-c", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait("mosquitto", lambda: self.connectable(self.broker_port), 10)

    @staticmethod
    def connectable(port):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def step(self):
        """Marks the start of a step: the tracker changes counted for the step's column are
        those from here to the next step's start."""
        self.step_started = time.monotonic()

    def start_bridge(self):
        self.step()
        log = open(os.path.join(WORK, "geotify.log"), "a")
        self.processes["geotify"] = subprocess.Popen(
            [self.args.geotify, "run", "--config", os.path.join(WORK, "geotify.json")], stdout=log, stderr=log)

    def stop_bridge(self):
        self.step()
        process = self.processes.pop("geotify")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)

    def start_ha(self):
        """Starts Home Assistant as the tool's start.sh does, with its configuration.yaml plus
        the automations of the docs and a hall light."""
        os.makedirs(self.conf, exist_ok=True)
        with open(os.path.join(self.args.tools, "configuration.yaml")) as f:
            configuration = f.read().replace("server_port: 28123", f"server_port: {self.ha_port}")
        with open(os.path.join(self.conf, "configuration.yaml"), "w") as f:
            f.write(configuration + EXTRA_CONFIGURATION)
        with open(os.path.join(self.conf, "automations.yaml"), "w") as f:
            f.write(automations())
        environment = dict(os.environ, SSL_CERT_FILE="/etc/ssl/certs/ca-certificates.crt")
        with open(os.path.join(self.conf, "hass.stdout"), "a") as out:
            process = subprocess.Popen(
                [os.path.join(os.environ["HA_VENV"], "bin", "hass"), "-c", self.conf, "--log-file", os.path.join(self.conf, "home-assistant.log")],
                stdout=out, stderr=out, start_new_session=True)
        self.processes["hass"] = process
        with open(os.path.join(self.conf, "hass.pid"), "w") as f:
            f.write(str(process.pid))
        if not wait("Home Assistant to start", self.answers, 180):
            raise SystemExit("Home Assistant did not start; see " + os.path.join(self.conf, "home-assistant.log"))

    def answers(self):
        """Whether Home Assistant's HTTP server answers at all, as start.sh asks it."""
        try:
            self.ha.req("GET", "/api/onboarding")
            return True
        except OSError:
            return False

    def stop_ha(self):
        process = self.processes.pop("hass")
        process.terminate()
        process.wait(timeout=120)

    def stop_all(self):
        """Stops the bridge, then Home Assistant (unless --keep), then the broker, so that
        Home Assistant does not log a lost broker."""
        for name in ("geotify", "hass", "mosquitto"):
            if name in self.processes and not (name in ("hass", "mosquitto") and self.args.keep):
                process = self.processes.pop(name)
                process.terminate()
                process.wait(timeout=120)

    # Home Assistant

    def states(self):
        status, states = self.ha.req("GET", "/api/states", token=self.ha.token())
        if status != 200:
            return {}
        return {s["entity_id"]: s for s in states if self.geotify_entity(s["entity_id"])}

    @staticmethod
    def geotify_entity(entity_id):
        return any(word in entity_id for word in ("alice_phone", "bob_phone", "geotify", "shared_fences")) or entity_id == "light.hall"

    def notifications(self):
        """How many persistent notifications say that Alice is home (they do not outlive a
        restart of Home Assistant)."""
        import asyncio
        result = asyncio.run(self.ha.ws(self.ha.token(), [{"type": "persistent_notification/get"}]))
        return sum(1 for n in result[0].get("result", []) if n.get("title") == "Alice is home")

    def zone(self, name, latitude, longitude, radius):
        import asyncio
        asyncio.run(self.ha.ws(self.ha.token(), [{"type": "zone/create", "name": name, "latitude": latitude, "longitude": longitude, "radius": radius}]))

    # MQTT

    def publish(self, topic, payload, retain=False):
        import paho.mqtt.client as mqtt
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        client.connect("127.0.0.1", self.broker_port)
        client.loop_start()
        client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(10)
        client.loop_stop()
        client.disconnect()

    def fix(self, device, position):
        self.step()
        self.clock += 30
        self.publish(f"owntracks/{device}", json.dumps(
            {"_type": "location", "lat": position[0], "lon": position[1], "acc": 10, "tst": self.clock, "tid": device[-2:]}))

    # the table

    def record(self, column, expect=None, timeout=20):
        """Waits until `expect` (entity → state) holds, then records every entity's state."""
        if expect:
            def holds():
                states = self.states()
                return all(states.get(e, {}).get("state") == v for e, v in expect.items()) and states
            if not wait(f"{column}: {expect}", holds, timeout):
                states = self.states()
                self.failures.append(f"{column}: expected {expect}, got { {e: states.get(e, {}).get('state') for e in expect} }")
        states = self.states()
        self.columns.append(column)
        for entity_id, state in states.items():
            self.rows.setdefault(entity_id, {})[column] = self.cell(entity_id, state)
        self.rows.setdefault("(notifications \"Alice is home\")", {})[column] = str(self.notifications())
        self.step_starts.append((column, self.step_started))
        print(f"- {column}", file=sys.stderr)

    @staticmethod
    def cell(entity_id, state):
        text = state["state"]
        attributes = state["attributes"]
        if entity_id.startswith("device_tracker.") and "latitude" in attributes:
            text += f" ({attributes['latitude']:.3f}, {attributes['longitude']:.3f})"
        if entity_id.startswith("event.") and attributes.get("event_type"):
            text = f"{attributes['event_type']} {attributes.get('fence', '')} at {text[11:19]}"
        return text

    TRACKERS = ("device_tracker.alice_phone", "device_tracker.bob_phone")
    # The steps in which one fix of Alice's moves her tracker: each must change it once.
    ONE_CHANGE = ("first fix outside", "move, no transition", "enter home", "exit home", "enter home again", "enter Supermarket")

    def count_changes(self):
        """Adds a row per tracker with its state_changed events in each step (from the
        step's start to the next step's; none counted after Home Assistant's restart,
        which ends the subscription), and fails a step of ONE_CHANGE that made another
        number of changes."""
        ends = [start for _, start in self.step_starts[1:]] + [float("inf")]
        for (column, start), end in zip(self.step_starts, ends):
            for tracker in self.TRACKERS:
                changes = self.changes.between(tracker, start, end)
                cell = "-" if column == "HA restarted" else str(len(changes))
                self.rows.setdefault(f"(state changes of {tracker})", {})[column] = cell
                if tracker == self.TRACKERS[0] and column in self.ONE_CHANGE and len(changes) != 1:
                    self.failures.append(f"{column}: {tracker} changed {len(changes)} times, not once: {changes}")

    def check_links(self):
        """Every Geotify device in Home Assistant's registry links to the web console
        (`configuration_url`, from `http.listen` with no `homeassistant.configurationUrl`)."""
        expected = f"http://127.0.0.1:{self.console_port}/"
        result = asyncio.run(self.ha.ws(self.ha.token(), [{"type": "config/device_registry/list"}]))
        devices = [d for d in result[0].get("result", []) if d.get("manufacturer") == "Geotify"]
        links = sorted({d.get("configuration_url") or "none" for d in devices})
        print(f"- {len(devices)} Geotify devices in Home Assistant, configuration_url: {', '.join(links)}", file=sys.stderr)
        if not devices or links != [expected]:
            self.failures.append(f"the devices' configuration_url is {links}, not {expected}")

    def table(self):
        lines = ["| entity | " + " | ".join(self.columns) + " |", "|---" * (len(self.columns) + 1) + "|"]
        for entity_id in sorted(self.rows):
            cells = [self.rows[entity_id].get(c, "-").replace("|", "\\|") for c in self.columns]
            name = entity_id if entity_id.startswith("(") else f"`{entity_id}`"
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def warnings(self):
        """Home Assistant's warnings and errors about MQTT, discovery or Geotify's topics."""
        found = []
        with open(os.path.join(self.conf, "home-assistant.log"), errors="replace") as log:
            for line in log:
                if re.search(r"\b(WARNING|ERROR)\b", line) and re.search(r"mqtt|geotify|homeassistant/", line, re.IGNORECASE):
                    found.append(line.rstrip())
        return found

    # the steps

    def main(self):
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(os.path.join(WORK, "state"))
        with open(os.path.join(WORK, "fences.json"), "w") as f:
            json.dump(FENCES, f, indent=2)
        with open(os.path.join(WORK, "geotify.json"), "w") as f:
            json.dump({"broker": f"mqtt://127.0.0.1:{self.broker_port}", "clientId": "geotify-ha-check", "fences": "fences.json",
                       "stateDir": "state", "statsInterval": 2, "logLevel": "debug",
                       "http": {"listen": f"127.0.0.1:{self.console_port}"}}, f, indent=2)
        try:
            self.start_broker()
            self.start_ha()
            subprocess.run([sys.executable, os.path.join(self.args.tools, "ha.py"), "onboard"], check=True, stdout=sys.stderr, env=os.environ)
            subprocess.run([sys.executable, os.path.join(self.args.tools, "ha.py"), "mqtt-entry", "127.0.0.1", str(self.broker_port)],
                           check=True, stdout=sys.stderr)
            self.zone("Supermarket", SUPERMARKET[0], SUPERMARKET[1], 100)
            self.changes = StateChanges(self.ha, self.TRACKERS)
            self.steps()
            self.count_changes()
            self.check_links()
        finally:
            self.stop_all()
        table = self.table()
        warnings = self.warnings()
        with open(os.path.join(WORK, "table.md"), "w") as f:
            f.write(table + "\n")
        print(table)
        print()
        print(f"Home Assistant's MQTT warnings and errors ({len(warnings)}):")
        for line in warnings:
            print("  " + line)
        for failure in self.failures:
            print("step not as expected: " + failure)
        if self.args.keep:
            print(f"Home Assistant keeps running on http://127.0.0.1:{self.ha_port} (user tester, password tester-pass-123); "
                  f"stop it with: kill $(cat {self.conf}/hass.pid)")
        return 1 if warnings or self.failures else 0

    def steps(self):
        self.start_bridge()
        self.record("discovery", {"binary_sensor.geotify_connectivity": "on", "device_tracker.alice_phone": "unknown"}, timeout=60)
        self.fix("alice/phone", (52.60, 13.50))
        self.record("first fix outside", {"device_tracker.alice_phone": "not_home", "binary_sensor.alice_phone_home": "off"})
        self.fix("bob/phone", (HOME[0] + 0.0002, HOME[1]))
        self.record("first fix inside (bob)", {"device_tracker.bob_phone": "home", "binary_sensor.bob_phone_home": "on"})
        self.fix("alice/phone", (52.65, 13.60))
        self.record("move, no transition", {"device_tracker.alice_phone": "not_home"})
        self.fix("alice/phone", HOME)
        self.record("enter home", {"device_tracker.alice_phone": "home", "binary_sensor.alice_phone_home": "on", "sensor.alice_phone_badge": "1",
                                   "light.hall": "on"})
        self.fix("alice/phone", (52.56, 13.45))
        self.record("exit home", {"device_tracker.alice_phone": "not_home", "binary_sensor.alice_phone_home": "off", "sensor.alice_phone_badge": "2"})
        self.fix("alice/phone", HOME)
        self.record("enter home again", {"device_tracker.alice_phone": "home", "sensor.alice_phone_badge": "3"})
        self.fix("alice/phone", SUPERMARKET)
        self.record("enter Supermarket", {"device_tracker.alice_phone": "Supermarket", "binary_sensor.alice_phone_supermarket": "on"})
        self.step()
        self.ha.req("POST", "/api/events/ios.became_active", {}, token=self.ha.token())
        self.record("app opened (reset)", {"sensor.alice_phone_badge": "0"})
        self.stop_bridge()
        self.record("bridge stopped", {"binary_sensor.geotify_connectivity": "off", "device_tracker.alice_phone": "unavailable"})
        self.start_bridge()
        self.record("bridge started", {"binary_sensor.geotify_connectivity": "on", "device_tracker.alice_phone": "Supermarket"})
        if self.notifications() != 2:
            self.failures.append(f"expected 2 notifications that Alice is home (two entries, none on the bridge's restart), got {self.notifications()}")
        self.step()
        self.stop_ha()
        self.start_ha()
        self.record("HA restarted", {"binary_sensor.geotify_connectivity": "on", "device_tracker.alice_phone": "Supermarket",
                                     "sensor.alice_phone_badge": "0"}, timeout=120)
        if self.notifications() != 0:
            self.failures.append(f"Home Assistant's restart notified that Alice is home again ({self.notifications()} notifications)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", required=True)
    parser.add_argument("--geotify", required=True)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--no-build", action="store_true")
    sys.exit(Run(parser.parse_args()).main())

// Geotify's map page: fences and devices live over Leaflet, and the app's screens (add,
// Peek & Pop, edit, Delete... with Cancel) through the same commands as MQTT.
// Plain JavaScript, no build step. Every URL is relative, so the page works under any
// path prefix a reverse proxy gives it. Text from the server is only ever set as text.
"use strict";

const state = {
  session: { user: null, roles: [] },
  devices: new Map(),      // device -> {device, lat, lon, acc, tst, badge, inside}
  fences: { devices: {}, shared: {}, groups: {} },
  notifications: [],
  layers: { fences: null, devices: null, editor: null },
  editing: null,           // {mode: "add" | "edit", device, fence}
  preview: null,           // {device, token, mode}
};

const $ = (id) => document.getElementById(id);
const colours = { inside: "#15803d", outside: "#2563eb", shared: "#7c3aed", sharedInside: "#c2410c", editing: "#db2777" };
const eventNames = { onEntry: "On Entry", onExit: "On Exit", onEntryAndExit: "On Entry and On Exit", onDwell: "On Dwell" };

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function canManage() {
  return state.session.roles.includes("manage");
}

function eventText(eventType) {
  const list = Array.isArray(eventType) ? eventType : [eventType];
  return list.map((name) => eventNames[name] || name).join(", ");
}

function showMessage(text, kind) {
  const box = $("message");
  box.hidden = !text;
  box.textContent = text || "";
  box.className = kind || "";
}

// ---- Map -----------------------------------------------------------------

let map;

function setUpMap(settings) {
  map = L.map("map", { worldCopyJump: false, zoomControl: true }).setView([20, 0], 2);
  L.control.scale({ metric: true, imperial: false }).addTo(map);
  if (settings.tiles) {
    const tiles = L.tileLayer(settings.tiles, { maxZoom: 19, attribution: settings.attribution });
    let failed = 0;
    tiles.on("tileerror", () => {
      failed += 1;
      if (failed === 1) map.attributionControl.addAttribution("map tiles unavailable: blank background");
    });
    tiles.addTo(map);
  } else {
    map.attributionControl.addAttribution("no map tiles configured");
  }
  state.layers.fences = L.layerGroup().addTo(map);
  state.layers.devices = L.layerGroup().addTo(map);
  state.layers.editor = L.layerGroup().addTo(map);
  const coordinates = $("coordinates");
  const showCoordinates = (latlng) => {
    coordinates.textContent = `${latlng.lat.toFixed(5)}, ${L.Util.wrapNum(latlng.lng, [-180, 180], true).toFixed(5)}`;
  };
  map.on("mousemove", (event) => showCoordinates(event.latlng));
  map.on("move", () => showCoordinates(map.getCenter()));
  showCoordinates(map.getCenter());
  map.on("click", (event) => {
    if (!canManage()) return;
    if (state.editing) {
      setEditorCentre(event.latlng.lat, L.Util.wrapNum(event.latlng.lng, [-180, 180], true));
    } else {
      openEditor("add", null, { latitude: event.latlng.lat, longitude: L.Util.wrapNum(event.latlng.lng, [-180, 180], true) });
    }
  });
}

// Longitudes shifted by whole turns to stay within 180° of a reference, so a ring that
// crosses ±180° is drawn as one shape and not around the world.
function unwrap(longitude, reference) {
  let value = longitude;
  while (value - reference > 180) value -= 360;
  while (value - reference < -180) value += 360;
  return value;
}

function polygonRings(polygon) {
  const rings = Array.isArray(polygon[0][0]) ? polygon : [polygon];
  const reference = rings[0][0][0];
  return rings.map((ring) => ring.map(([lon, lat]) => [lat, unwrap(lon, reference)]));
}

function fenceOwnersInside(owner, shared, identifier) {
  const inside = [];
  for (const device of state.devices.values()) {
    if (!(device.inside || []).includes(identifier)) continue;
    if (shared || device.device === owner) inside.push(device.device);
  }
  return inside;
}

function fenceTooltip(fence, owner, shared, inside) {
  const box = element("div", null, "tip");
  box.append(element("strong", fence.identifier));
  box.append(element("div", shared ? `shared (${owner})` : owner, "muted"));
  if (fence.note) box.append(element("div", fence.note));
  box.append(element("div", eventText(fence.eventType)));
  box.append(element("div", inside.length ? `inside: ${inside.join(", ")}` : "nobody inside", "muted"));
  return box;
}

function fenceLayer(fence, owner, shared) {
  const inside = fenceOwnersInside(owner, shared, fence.identifier);
  const colour = shared ? (inside.length ? colours.sharedInside : colours.shared) : (inside.length ? colours.inside : colours.outside);
  const style = { color: colour, fillColor: colour, weight: inside.length ? 3 : 2, fillOpacity: inside.length ? 0.25 : 0.1, dashArray: shared ? "6 4" : null, own: !shared };
  const layer = fence.polygon
    ? L.polygon(polygonRings(fence.polygon), style)
    : L.circle([fence.latitude, fence.longitude], Object.assign({ radius: fence.radius }, style));
  layer.bindTooltip(() => fenceTooltip(fence, owner, shared, fenceOwnersInside(owner, shared, fence.identifier)), { sticky: true });
  if (!shared) {
    layer.on("click", (event) => {
      L.DomEvent.stopPropagation(event);
      if (canManage() && !state.editing) openEditor("edit", owner, fence);
    });
  }
  return layer;
}

function drawFences() {
  state.layers.fences.clearLayers();
  for (const [device, fences] of Object.entries(state.fences.devices)) {
    for (const fence of fences) state.layers.fences.addLayer(fenceLayer(fence, device, false));
  }
  for (const [owner, fences] of Object.entries(state.fences.shared)) {
    for (const fence of fences) state.layers.fences.addLayer(fenceLayer(fence, owner, true));
  }
  listFences();
}

function deviceTooltip(device) {
  const box = element("div", null, "tip");
  box.append(element("strong", device.device));
  box.append(element("div", `badge ${device.badge}`));
  box.append(element("div", device.inside && device.inside.length ? `in ${device.inside.join(", ")}` : "in no fence"));
  if (device.tst) box.append(element("div", new Date(device.tst * 1000).toLocaleString(), "muted"));
  if (device.acc !== undefined) box.append(element("div", `± ${Math.round(device.acc)} m`, "muted"));
  return box;
}

function drawDevices() {
  state.layers.devices.clearLayers();
  for (const device of state.devices.values()) {
    if (device.lat === undefined) continue;
    if (device.acc) {
      state.layers.devices.addLayer(L.circle([device.lat, device.lon], { radius: device.acc, color: "#64748b", weight: 1, fillOpacity: 0.08, interactive: false }));
    }
    const marker = L.circleMarker([device.lat, device.lon], { radius: 7, color: "#0f172a", weight: 2, fillColor: device.inside && device.inside.length ? colours.inside : "#f8fafc", fillOpacity: 1 });
    marker.bindTooltip(() => deviceTooltip(device), { permanent: false });
    state.layers.devices.addLayer(marker);
  }
  listDevices();
}

// The first view: the devices and their own fences (shared sets may span the world),
// or, without any, every fence.
function fitEverything() {
  const near = L.latLngBounds([]);
  for (const device of state.devices.values()) {
    if (device.lat !== undefined) near.extend([device.lat, device.lon]);
  }
  const all = L.latLngBounds([]);
  state.layers.fences.eachLayer((layer) => {
    all.extend(layer.getBounds());
    if (layer.options.own) near.extend(layer.getBounds());
  });
  const bounds = near.isValid() ? near : all;
  if (bounds.isValid()) map.fitBounds(bounds.pad(0.2), { maxZoom: 16 });
}

// ---- Lists -----------------------------------------------------------------

function listDevices() {
  const list = $("devices");
  list.replaceChildren();
  const names = [...state.devices.keys()].sort();
  for (const name of names) {
    const device = state.devices.get(name);
    const item = element("li");
    item.dataset.device = name;
    const button = element("button", name, "link");
    button.type = "button";
    button.addEventListener("click", () => { if (device.lat !== undefined) map.setView([device.lat, device.lon], Math.max(map.getZoom(), 15)); });
    item.append(button, element("span", ` badge ${device.badge}`, "muted"));
    item.append(element("div", device.inside && device.inside.length ? `in ${device.inside.join(", ")}` : "in no fence", "small"));
    list.append(item);
  }
  if (!names.length) list.append(element("li", "no device has reported yet", "muted"));
  const options = $("device-names");
  options.replaceChildren();
  for (const name of new Set([...names, ...Object.keys(state.fences.devices)])) {
    const option = element("option");
    option.value = name;
    options.append(option);
  }
}

function listFences() {
  const list = $("fences");
  list.replaceChildren();
  for (const device of Object.keys(state.fences.devices).sort()) {
    for (const fence of state.fences.devices[device]) {
      const item = element("li");
      item.dataset.fence = `${device}/${fence.identifier}`;
      const go = element("button", fence.identifier, "link");
      go.type = "button";
      go.addEventListener("click", () => zoomTo(fence));
      item.append(go, element("span", ` ${device} · ${eventText(fence.eventType)}`, "muted"));
      if (fence.note) item.append(element("div", fence.note, "small"));
      if (canManage()) {
        const edit = element("button", "Edit", "small-button");
        edit.type = "button";
        edit.addEventListener("click", () => openEditor("edit", device, fence));
        const remove = element("button", "Delete…", "small-button danger");
        remove.type = "button";
        remove.addEventListener("click", () => askDelete(device, fence));
        item.append(edit, remove);
      }
      list.append(item);
    }
  }
  for (const owner of Object.keys(state.fences.shared).sort()) {
    for (const fence of state.fences.shared[owner]) {
      const item = element("li");
      const go = element("button", fence.identifier, "link");
      go.type = "button";
      go.addEventListener("click", () => zoomTo(fence));
      item.append(go, element("span", ` shared (${owner}) · ${eventText(fence.eventType)}`, "muted"));
      list.append(item);
    }
  }
  if (state.fences.truncated) list.append(element("li", "more shared fences than the page shows", "muted"));
  if (!list.children.length) list.append(element("li", "no fences yet", "muted"));
}

function zoomTo(fence) {
  if (fence.polygon) {
    map.fitBounds(L.polygon(polygonRings(fence.polygon)).getBounds().pad(0.2));
  } else {
    map.fitBounds(L.latLng(fence.latitude, fence.longitude).toBounds(fence.radius * 2.4));
  }
}

function addNotification(notification, atTop) {
  if (state.notifications.some((known) => known.id === notification.id)) return false;
  if (atTop) state.notifications.unshift(notification); else state.notifications.push(notification);
  state.notifications.splice(100);
  return true;
}

function listNotifications() {
  const list = $("notifications");
  list.replaceChildren();
  for (const notification of state.notifications) {
    const item = element("li");
    item.dataset.event = notification.event;
    item.append(element("strong", `${notification.event} ${notification.fence}`));
    item.append(element("span", ` ${notification.device} · badge ${notification.badge}`, "muted"));
    if (notification.note) item.append(element("div", notification.note));
    if (notification.tst) item.append(element("div", new Date(notification.tst * 1000).toLocaleString(), "small"));
    list.append(item);
  }
  if (!state.notifications.length) list.append(element("li", "no notifications yet", "muted"));
}

// ---- Live state ------------------------------------------------------------

function applyState(snapshot) {
  state.session = snapshot.session;
  $("who").textContent = snapshot.session.user ? `${snapshot.session.user} (${snapshot.session.roles.join(", ")})` : "";
  $("add-fence").hidden = !canManage();
  state.devices = new Map(snapshot.devices.map((device) => [device.device, device]));
  state.fences = snapshot.fences;
  state.notifications = [];
  for (const notification of snapshot.notifications) addNotification(notification, false);
  drawFences();
  drawDevices();
  listNotifications();
}

// Whether the map was fitted to everything yet (once, at the first state).
let fitted = false;

// The stream only says that the fences changed (the list of a large book is megabytes);
// the page fetches api/fences then. One fetch at a time: a notice during a fetch asks for
// exactly one more after it. A refused or failed fetch is tried again after its
// Retry-After, or 1, 2, 4... seconds, at most 30. A fetch begun before a `state` event
// (which carries the fences itself) may be older than it, so it is not drawn.
const fenceFetch = { busy: false, again: false, states: 0 };

function fencesChanged() {
  if (fenceFetch.busy) {
    fenceFetch.again = true;
  } else {
    fenceFetch.busy = true;
    fetchFences(0);
  }
}

async function fetchFences(failures) {
  fenceFetch.again = false;
  const states = fenceFetch.states;
  let fences = null;
  let wait = Math.min(30, 2 ** failures);
  try {
    const response = await fetch("api/fences");
    if (response.ok) fences = await response.json();
    else wait = Math.min(30, Number(response.headers.get("Retry-After")) || wait);
  } catch {
    // Unreachable, or the answer cut short: tried again below.
  }
  if (fences === null) {
    setTimeout(() => fetchFences(failures + 1), wait * 1000);
    return;
  }
  if (states === fenceFetch.states) {
    state.fences = fences;
    drawFences();
  }
  if (fenceFetch.again) fetchFences(0); else fenceFetch.busy = false;
}

function follow() {
  const source = new EventSource("api/events");
  source.addEventListener("state", (event) => {
    fenceFetch.states += 1;
    applyState(JSON.parse(event.data));
    if (!fitted) {
      fitted = true;
      fitEverything();
    }
    $("live").textContent = "live";
    $("live").className = "badge live";
  });
  source.addEventListener("device", (event) => {
    const device = JSON.parse(event.data);
    state.devices.set(device.device, device);
    drawDevices();
    drawFences();
  });
  // A device the bridge forgot (the fence file stopped naming it, or it was evicted
  // when idle): its marker, its entry in the list and its part in the fences go.
  source.addEventListener("forgotten", (event) => {
    if (state.devices.delete(JSON.parse(event.data).device)) {
      drawDevices();
      drawFences();
    }
  });
  source.addEventListener("notification", (event) => {
    if (addNotification(JSON.parse(event.data), true)) listNotifications();
  });
  source.addEventListener("fences", fencesChanged);
  source.addEventListener("error", () => {
    $("live").textContent = "reconnecting…";
    $("live").className = "badge offline";
    // The browser reconnects a stream that dropped, but gives up on one refused (429
    // too_many_unread, 503 too_many_streams): open that one again after a while.
    if (source.readyState === EventSource.CLOSED) setTimeout(follow, 5000);
  });
}

// ---- Commands --------------------------------------------------------------

function devicePath(device) {
  return device.split("/").map(encodeURIComponent).join("/");
}

async function command(device, body) {
  const response = await fetch(`api/cmd/${devicePath(device)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  let reply;
  try {
    reply = await response.json();
  } catch (error) {
    reply = { ok: false, error: { code: `http_${response.status}`, message: `the server answered ${response.status}` } };
  }
  if (!reply.ok) {
    const error = reply.error || { code: "unknown", message: "refused" };
    throw new Error(`${error.message} (${error.code})`);
  }
  return reply;
}

// ---- Add / Edit: the form, Peek and Pop -------------------------------------

let radiusHandle = null;
let editorCircle = null;

function formValues() {
  const form = $("fence-form");
  return {
    device: form.device.value.trim(),
    identifier: form.identifier.value.trim(),
    latitude: parseFloat(form.latitude.value),
    longitude: parseFloat(form.longitude.value),
    radius: parseFloat(form.radius.value),
    note: form.note.value,
    eventType: form.eventType.value,
  };
}

function handlePosition(latitude, longitude, radius) {
  return L.latLng(latitude, longitude).toBounds(radius * 2).getEast();
}

function drawEditorShape() {
  state.layers.editor.clearLayers();
  const values = formValues();
  if (Number.isNaN(values.latitude) || Number.isNaN(values.longitude) || state.editing.polygon) return;
  const radius = Number.isNaN(values.radius) || values.radius <= 0 ? 1 : values.radius;
  editorCircle = L.circle([values.latitude, values.longitude], { radius, color: colours.editing, fillColor: colours.editing, fillOpacity: 0.15, dashArray: "4 4", interactive: false });
  state.layers.editor.addLayer(editorCircle);
  radiusHandle = L.marker([values.latitude, handlePosition(values.latitude, values.longitude, radius)], {
    draggable: true,
    keyboard: true,
    title: "Drag to set the radius",
    alt: "radius handle",
    icon: L.divIcon({ className: "radius-handle", iconSize: [18, 18] }),
  });
  radiusHandle.on("drag", () => {
    const centre = L.latLng(values.latitude, values.longitude);
    const distance = centre.distanceTo(radiusHandle.getLatLng());
    $("f-radius").value = Math.max(1, Math.round(distance));
    editorCircle.setRadius(Math.max(1, distance));
  });
  radiusHandle.on("dragend", drawEditorShape);
  state.layers.editor.addLayer(radiusHandle);
}

function setEditorCentre(latitude, longitude) {
  $("f-latitude").value = latitude.toFixed(6);
  $("f-longitude").value = longitude.toFixed(6);
  drawEditorShape();
}

function openEditor(mode, device, fence) {
  cancelPreview();
  const form = $("fence-form");
  state.editing = { mode, device, fence: mode === "edit" ? fence : null, polygon: Boolean(fence && fence.polygon) };
  $("editor-title").textContent = mode === "add" ? "Add fence" : `Edit ${fence.identifier}`;
  form.device.value = device || form.device.value || (state.devices.size ? [...state.devices.keys()][0] : "");
  form.device.readOnly = mode === "edit";
  form.identifier.value = mode === "edit" ? fence.identifier : "";
  form.latitude.value = fence && fence.latitude !== undefined ? Number(fence.latitude).toFixed(6) : "";
  form.longitude.value = fence && fence.longitude !== undefined ? Number(fence.longitude).toFixed(6) : "";
  form.radius.value = fence && fence.radius !== undefined ? fence.radius : 100;
  for (const input of [form.latitude, form.longitude, form.radius]) {
    input.disabled = state.editing.polygon;
    input.required = !state.editing.polygon;
  }
  form.note.value = mode === "edit" ? fence.note || "" : "";
  const eventType = mode === "edit" ? fence.eventType : "onEntry";
  const select = form.eventType;
  [...select.options].filter((option) => option.dataset.extra).forEach((option) => option.remove());
  const value = Array.isArray(eventType) ? eventType.join(",") : eventType;
  if (![...select.options].some((option) => option.value === value)) {
    const option = element("option", eventText(eventType));
    option.value = value;
    option.dataset.extra = "yes";
    select.append(option);
  }
  select.value = value;
  $("editor").hidden = false;
  showMessage("");
  drawEditorShape();
  if (mode === "add" && !form.device.value) form.device.focus(); else form.identifier.focus();
}

function closeEditor() {
  state.editing = null;
  $("editor").hidden = true;
  state.layers.editor.clearLayers();
}

function eventTypeValue(text) {
  return text.includes(",") ? text.split(",") : text;
}

// The change the form describes: a whole fence to add, or the fields an edit changes.
function proposal() {
  const values = formValues();
  if (state.editing.mode === "add") {
    return {
      device: values.device,
      change: {
        action: "add",
        fence: { identifier: values.identifier, latitude: values.latitude, longitude: values.longitude, radius: values.radius, note: values.note, eventType: eventTypeValue(values.eventType) },
      },
    };
  }
  const fence = state.editing.fence;
  const changes = {};
  if (values.identifier !== fence.identifier) changes.identifier = values.identifier;
  if (!state.editing.polygon) {
    if (values.latitude !== fence.latitude) changes.latitude = values.latitude;
    if (values.longitude !== fence.longitude) changes.longitude = values.longitude;
    if (values.radius !== fence.radius) changes.radius = values.radius;
  }
  if (values.note !== (fence.note || "")) changes.note = values.note;
  const eventType = eventTypeValue(values.eventType);
  if (JSON.stringify(eventType) !== JSON.stringify(fence.eventType)) changes.eventType = eventType;
  return { device: state.editing.device, change: { action: "edit", fence: fence.identifier, changes } };
}

function describePreview(reply, mode) {
  const details = $("peek-details");
  details.replaceChildren();
  const add = (term, value) => {
    details.append(element("dt", term), element("dd", value));
  };
  const preview = reply.preview;
  const fence = preview.fence || {};
  add("Change", mode);
  add("Identifier", fence.identifier);
  if (fence.polygon) {
    add("Area", "polygon");
  } else {
    add("Centre", `${fence.latitude}, ${fence.longitude}`);
    add("Radius", `${fence.radius} m`);
  }
  add("Note", fence.note || "—");
  add("Notify", eventText(fence.eventType));
  if (preview.relation) {
    const relation = preview.relation;
    const distance = relation.distanceToEdge !== undefined ? `, ${Math.abs(relation.distanceToEdge)} m ${relation.distanceToEdge < 0 ? "inside" : "outside"} the edge` : "";
    add("Device now", `${relation.state}${distance}`);
  }
  const notification = preview.notification;
  add("Next fix would notify", notification ? `${notification.event}: ${notification.note || notification.fence}` : "nothing");
  add("Token expires", new Date(reply.expires * 1000).toLocaleTimeString());
  const warnings = $("peek-warnings");
  warnings.replaceChildren();
  for (const warning of preview.warnings || []) warnings.append(element("li", warning));
}

async function peek(event) {
  event.preventDefault();
  if (!$("fence-form").reportValidity()) return;
  const { device, change } = proposal();
  if (change.action === "edit" && Object.keys(change.changes).length === 0) {
    showMessage("nothing changed", "info");
    return;
  }
  try {
    const reply = await command(device, { action: "preview", change });
    state.preview = { device, token: reply.token, mode: change.action };
    describePreview(reply, change.action);
    $("peek").hidden = false;
    $("editor").hidden = true;
    showMessage("");
    $("pop-button").focus();
  } catch (error) {
    showMessage(error.message, "error");
  }
}

async function pop() {
  const preview = state.preview;
  if (!preview) return;
  try {
    const reply = await command(preview.device, { action: "commit", token: preview.token });
    state.preview = null;
    $("peek").hidden = true;
    closeEditor();
    showMessage(`${reply.committed}: ${reply.fence ? reply.fence.identifier : ""} saved`, "ok");
  } catch (error) {
    state.preview = null;
    $("peek").hidden = true;
    $("editor").hidden = false;
    showMessage(error.message, "error");
  }
}

function cancelPreview() {
  const preview = state.preview;
  state.preview = null;
  $("peek").hidden = true;
  if (preview) command(preview.device, { action: "cancel", token: preview.token }).catch(() => {});
}

// ---- Delete... with Cancel -------------------------------------------------

async function askDelete(device, fence) {
  let reply;
  try {
    reply = await command(device, { action: "delete", fence: fence.identifier });
  } catch (error) {
    showMessage(error.message, "error");
    return;
  }
  const dialog = $("confirm-delete");
  $("confirm-text").textContent = `Delete the fence "${fence.identifier}" of ${device}? ${fence.note ? `(${fence.note})` : ""}`;
  dialog.returnValue = "";
  dialog.addEventListener("close", async () => {
    try {
      if (dialog.returnValue === "delete") {
        await command(device, { action: "commit", token: reply.token });
        showMessage(`deleted ${fence.identifier}`, "ok");
      } else {
        await command(device, { action: "cancel", token: reply.token });
        showMessage(`kept ${fence.identifier}`, "info");
      }
    } catch (error) {
      showMessage(error.message, "error");
    }
  }, { once: true });
  dialog.showModal();
}

// ---- Start -------------------------------------------------------------------

function goTo(event) {
  event.preventDefault();
  const parts = $("goto-text").value.split(/[,\s]+/).filter(Boolean).map(Number);
  if (parts.length !== 2 || parts.some(Number.isNaN) || Math.abs(parts[0]) > 90 || Math.abs(parts[1]) > 180) {
    showMessage("type a position as latitude, longitude (e.g. 52.52, 13.405)", "error");
    return;
  }
  map.setView(parts, Math.max(map.getZoom(), 15));
  if (state.editing) setEditorCentre(parts[0], parts[1]);
}

async function start() {
  const response = await fetch("api/state");
  if (!response.ok) {
    showMessage(`cannot load the state: ${response.status}`, "error");
    return;
  }
  const initial = await response.json();
  setUpMap(initial.map);
  applyState(initial);
  fitEverything();
  follow();
  $("add-fence").addEventListener("click", () => {
    const centre = map.getCenter();
    openEditor("add", null, { latitude: centre.lat, longitude: L.Util.wrapNum(centre.lng, [-180, 180], true) });
  });
  $("goto").addEventListener("submit", goTo);
  $("fence-form").addEventListener("submit", peek);
  $("fence-form").addEventListener("input", (event) => {
    if (["latitude", "longitude", "radius"].includes(event.target.name)) drawEditorShape();
  });
  $("editor-cancel").addEventListener("click", closeEditor);
  $("pop-button").addEventListener("click", pop);
  $("peek-cancel").addEventListener("click", () => {
    cancelPreview();
    $("editor").hidden = false;
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.editing && !$("confirm-delete").open) {
      cancelPreview();
      closeEditor();
    }
  });
}

window.addEventListener("DOMContentLoaded", start);

#!/usr/bin/env python3
"""Generates GeodesyReference.swift: reference values from GeographicLib (Karney) for the
GeotifyCore geometry tests.

Tooling only (not a dependency of the package). To regenerate, from the repository root:

    pip install geographiclib
    python3 Tests/GeotifyCoreTests/Reference/make_geodesy_reference.py \
        > Tests/GeotifyCoreTests/GeodesyReference.swift

The sample is deterministic (fixed seed), so regenerating with the same GeographicLib
version gives the same file.
"""

import math
import random

import geographiclib
from geographiclib.geodesic import Geodesic

GEOD = Geodesic.WGS84
RNG = random.Random(20240601)
SHORT_LIMIT = 100_000.0


def uniform_latitude(lo=-90.0, hi=90.0):
    """Latitude uniformly distributed over the sphere's area between lo and hi."""
    s = RNG.uniform(math.sin(math.radians(lo)), math.sin(math.radians(hi)))
    return math.degrees(math.asin(s))


def wrap(lon):
    lon = math.remainder(lon, 360.0)
    return lon


def direct(lat, lon, azi, s):
    g = GEOD.Direct(lat, lon, azi, s)
    return g["lat2"], wrap(g["lon2"])


def inverse(lat1, lon1, lat2, lon2):
    return GEOD.Inverse(lat1, lon1, lat2, lon2)["s12"]


pairs = []  # (label, lat1, lon1, lat2, lon2)


def add(label, lat1, lon1, lat2, lon2):
    pairs.append((label, lat1, lon1, lat2, lon2))


def add_direct(label, lat, lon, azi, s):
    lat2, lon2 = direct(lat, lon, azi, s)
    add(label, lat, lon, lat2, lon2)


def log_distance(lo=0.01, hi=SHORT_LIMIT):
    return math.exp(RNG.uniform(math.log(lo), math.log(hi)))


# Random short and medium pairs anywhere.
for _ in range(120):
    add_direct("random", uniform_latitude(), RNG.uniform(-180, 180), RNG.uniform(-180, 180), log_distance())

# Near both poles, and pairs straddling a pole (on opposite meridians).
for pole in (90.0, -90.0):
    sign = 1.0 if pole > 0 else -1.0
    for _ in range(20):
        add_direct("polar", sign * RNG.uniform(89.0, 90.0), RNG.uniform(-180, 180), RNG.uniform(-180, 180),
                   log_distance(1.0, SHORT_LIMIT))
    for _ in range(12):
        lon = RNG.uniform(-180, 180)
        add("straddling pole", sign * RNG.uniform(89.3, 89.9999), lon, sign * RNG.uniform(89.3, 89.9999),
            wrap(lon + 180 + RNG.uniform(-20, 20)))
    add("at pole", pole, 0.0, sign * 89.5, 45.0)
    add("at pole", pole, 30.0, pole, -120.0)
    add("at pole", pole, -75.0, sign * 89.99999, 100.0)
    add("at pole", sign * 89.1, 0.0, pole, 0.0)

# Across the antimeridian.
for lat in (0.0, 12.5, -33.3, 60.0, -75.0, 89.0, -89.9):
    add("antimeridian", lat, 179.999, lat, -179.999)
    add("antimeridian", lat, -179.999, lat + (0.01 if lat < 89 else -0.01), 179.9995)
for _ in range(25):
    lon = RNG.choice((179.9, -179.9)) + RNG.uniform(-0.1, 0.1)
    lat = uniform_latitude(-85, 85)
    azi = RNG.choice((90.0, -90.0)) + RNG.uniform(-60, 60)
    add_direct("antimeridian", lat, lon, azi, log_distance(1.0, SHORT_LIMIT))

# On the equator, and meridional pairs.
for _ in range(15):
    lon = RNG.uniform(-180, 180)
    add("equator", 0.0, lon, 0.0, wrap(lon + RNG.uniform(-0.9, 0.9)))
add("equator", 0.0, 179.9, 0.0, -179.9)
add("equator", 0.0, 0.0, 0.0, 0.0000001)
for _ in range(15):
    lon = RNG.uniform(-180, 180)
    lat = uniform_latitude(-89, 89)
    add("meridional", lat, lon, max(-90.0, min(90.0, lat + RNG.uniform(-0.9, 0.9))), lon)
add("meridional", -0.4, 10.0, 0.4, 10.0)

# Coincident points, 1 m pairs and 100 km pairs.
for lat, lon in ((0.0, 0.0), (45.0, 7.0), (90.0, 0.0), (-90.0, 180.0), (12.0, 180.0), (-12.0, -180.0),
                 (89.99999, 33.0), (-51.5, -0.1), (35.0, 139.7), (-33.9, 151.2)):
    add("coincident", lat, lon, lat, lon)
for _ in range(20):
    add_direct("1 m", uniform_latitude(), RNG.uniform(-180, 180), RNG.uniform(-180, 180), 1.0)
for lat in (0.0, 89.99, -89.99):
    add_direct("1 m", lat, 179.9999999, 90.0, 1.0)
for _ in range(25):
    add_direct("100 km", uniform_latitude(), RNG.uniform(-180, 180), RNG.uniform(-180, 180), SHORT_LIMIT)
for lat, lon, azi in ((0.0, 0.0, 0.0), (0.0, 0.0, 90.0), (89.5, 0.0, 0.0), (-89.5, 0.0, 180.0), (0.0, 179.5, 90.0)):
    add_direct("100 km", lat, lon, azi, SHORT_LIMIT)

# Long and nearly antipodal pairs (checked with the 0.5 % tolerance).
for _ in range(30):
    add("long", uniform_latitude(), RNG.uniform(-180, 180), uniform_latitude(), RNG.uniform(-180, 180))
for _ in range(20):
    lat = uniform_latitude()
    lon = RNG.uniform(-180, 180)
    add("antipodal", lat, lon, max(-90.0, min(90.0, -lat + RNG.uniform(-0.5, 0.5))),
        wrap(lon + 180 + RNG.uniform(-0.5, 0.5)))
for lat1, lon1, lat2, lon2 in ((0.0, 0.0, 0.0, 180.0), (0.0, 0.0, 0.5, 179.5), (0.0, 0.0, 0.0, 179.5),
                               (0.0, 0.0, 0.0, 179.7), (-30.0, 0.0, 29.9, 179.8), (30.0, 0.0, -30.0, 180.0),
                               (1e-10, 0.0, -1e-10, 179.99999), (89.0, 0.0, -89.0, 180.0), (0.0, -90.0, 0.0, 90.0),
                               (-41.32, 174.81, 40.96, -5.50)):
    add("antipodal", lat1, lon1, lat2, lon2)


# Points on and inside circles, for BoundingBox.around.
circle_centers = [(0.0, 0.0), (45.0, 7.0), (-33.9, 151.2), (89.9, 10.0), (89.999, -170.0), (-89.5, 100.0),
                  (90.0, 0.0), (-90.0, 0.0), (10.0, 179.9999), (-60.0, -179.95), (70.0, 180.0), (0.0, -180.0),
                  (89.0, 179.5), (-88.2, -179.0)]
for _ in range(4):
    circle_centers.append((uniform_latitude(), RNG.uniform(-180, 180)))
circle_radii = (0.0, 1.0, 100_000.0, 1_000_000.0)
circle_points = []  # (center lat, center lon, radius, lat, lon)
for lat, lon in circle_centers:
    for radius in circle_radii:
        bearings = [i * 360.0 / 16 for i in range(16)]
        for bearing in bearings:
            circle_points.append((lat, lon, radius) + direct(lat, lon, bearing, radius))
        for _ in range(4):
            circle_points.append((lat, lon, radius) + direct(lat, lon, RNG.uniform(-180, 180),
                                                            RNG.uniform(0, radius)))


def fmt(x):
    return repr(float(x))


print("// Generated by Tests/GeotifyCoreTests/Reference/make_geodesy_reference.py from GeographicLib %s."
      % geographiclib.__version__)
print("// Do not edit: regenerate (see the script's header).")
print()
print("/// Reference values computed with GeographicLib (Karney's geodesic algorithms, WGS84).")
print("enum GeodesyReference {")
print("    /// Inverse problem: (lat1, lon1, lat2, lon2, distance in metres), %d pairs." % len(pairs))
print("    static let pairs: [(Double, Double, Double, Double, Double)] = [")
for label, lat1, lon1, lat2, lon2 in pairs:
    s = inverse(lat1, lon1, lat2, lon2)
    print("        (%s, %s, %s, %s, %s), // %s" % (fmt(lat1), fmt(lon1), fmt(lat2), fmt(lon2), fmt(s), label))
print("    ]")
print()
print("    /// Direct problem: (center lat, center lon, radius, lat, lon) of points at exactly the")
print("    /// radius in 16 bearings and at random distances within it, %d points." % len(circle_points))
print("    static let circlePoints: [(Double, Double, Double, Double, Double)] = [")
for row in circle_points:
    print("        (%s)," % ", ".join(fmt(v) for v in row))
print("    ]")
print("}")

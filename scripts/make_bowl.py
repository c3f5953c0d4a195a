#!/usr/bin/env python3
"""Writes scenes/meshes/bowl.obj: a closed, thick spherical bowl (a static obstacle for
scenes/bowl.json). The solid lies between two concentric spherical caps — outer radius 0.55,
inner 0.50, centred 0.55 above the origin so the outside touches y = 0 — cut at 70 degrees from
the bottom and closed by a flat rim ring. Outward-facing triangles (checked: positive volume).

    python3 scripts/make_bowl.py > scenes/meshes/bowl.obj
"""
import math

OUTER, INNER, THETA_MAX, RINGS, SEGMENTS = 0.55, 0.50, math.radians(70), 24, 48
CENTRE_Y = OUTER

vertices, faces = [], []


def cap(radius):
    """Rings of a cap: the bottom pole, then RINGS rings up to THETA_MAX."""
    first = len(vertices) + 1
    vertices.append((0.0, CENTRE_Y - radius, 0.0))
    for i in range(1, RINGS + 1):
        t = THETA_MAX * i / RINGS
        for j in range(SEGMENTS):
            p = 2 * math.pi * j / SEGMENTS
            vertices.append((radius * math.sin(t) * math.cos(p), CENTRE_Y - radius * math.cos(t),
                             radius * math.sin(t) * math.sin(p)))
    return first


def ring(first, i, j):
    return first + 1 + (i - 1) * SEGMENTS + (j % SEGMENTS)


def surface(first, outward):
    tris = []
    for j in range(SEGMENTS):
        tris.append((first, ring(first, 1, j + 1), ring(first, 1, j)))
    for i in range(1, RINGS):
        for j in range(SEGMENTS):
            a, b = ring(first, i, j), ring(first, i, j + 1)
            c, d = ring(first, i + 1, j), ring(first, i + 1, j + 1)
            tris += [(a, b, d), (a, d, c)]
    if not outward:
        tris = [(a, c, b) for a, b, c in tris]
    faces.extend(tris)


outer = cap(OUTER)
surface(outer, True)
inner = cap(INNER)
surface(inner, False)
for j in range(SEGMENTS):  # the rim, joining the top rings
    a, b = ring(outer, RINGS, j), ring(outer, RINGS, j + 1)
    c, d = ring(inner, RINGS, j), ring(inner, RINGS, j + 1)
    faces += [(a, d, c), (a, b, d)]


def volume():
    v = 0.0
    for a, b, c in faces:
        p, q, r = vertices[a - 1], vertices[b - 1], vertices[c - 1]
        v += (p[0] * (q[1] * r[2] - q[2] * r[1]) - p[1] * (q[0] * r[2] - q[2] * r[0]) +
              p[2] * (q[0] * r[1] - q[1] * r[0])) / 6
    return v


if volume() < 0:
    faces = [(a, c, b) for a, b, c in faces]
print("# A thick spherical bowl, written by scripts/make_bowl.py for smash.")
for v in vertices:
    print("v %.6f %.6f %.6f" % v)
for f in faces:
    print("f %d %d %d" % f)

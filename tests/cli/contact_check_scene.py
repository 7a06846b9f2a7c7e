#!/usr/bin/env python3
"""Writes the scene a contact-check CLI test runs (tests/cli/expect_contact_check.cmake).

    contact_check_scene.py SCENE OUT --max-steps N [--rod-contact off]

Prints "copy" and writes OUT when the scene must change, else prints "as is" (run SCENE
itself). It changes when:
  - the scene would take more than N steps: time.duration is cut to the whole frames that fit
    in N steps (at least one frame), so a slow scene is checked over its start only;
  - --rod-contact off: rod_contact.enabled is false (the test that check-contact can fail).
Nothing else changes; the copy keeps every other key, and a relative "$schema" is only a hint
for editors (the loader does not open it).
"""
import argparse
import json
import math
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scene")
    parser.add_argument("out")
    parser.add_argument("--max-steps", type=int, required=True)
    parser.add_argument("--rod-contact", choices=["keep", "off"], default="keep")
    args = parser.parse_args()
    with open(args.scene, encoding="utf-8") as stream:
        scene = json.load(stream)
    changed = []
    time = scene["time"]
    dt = float(time["dt"])
    frame_dt = float(time.get("frame_dt", dt))
    steps_per_frame = max(1, round(frame_dt / dt))
    frames = round(float(time["duration"]) / frame_dt)  # frames after frame 0
    if frames * steps_per_frame > args.max_steps:
        kept = max(1, args.max_steps // steps_per_frame)
        time["duration"] = kept * frame_dt
        changed.append(f"duration {kept * frame_dt:g} s ({kept} of {frames} frames, {kept * steps_per_frame} steps)")
    if args.rod_contact == "off":
        scene.setdefault("rod_contact", {})["enabled"] = False
        changed.append("rod_contact off")
    if not changed:
        print("as is")
        return 0
    with open(args.out, "w", encoding="utf-8") as stream:
        json.dump(scene, stream, indent=1)
        stream.write("\n")
    print("copy: " + ", ".join(changed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

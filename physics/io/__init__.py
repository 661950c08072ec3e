"""Files: scene files in (scene.py) and out (scene_writer.py), the CSV recorder (record.py)."""

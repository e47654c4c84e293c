"""Generator of the Acme Analytics world (run `python tasks/acme/generate.py`).

The SQL and chat parts use only the standard library and `random.Random(seed)`,
so the same seed always yields byte-identical files; documents need openpyxl,
python-docx and odfpy (generator-only dependencies).
"""

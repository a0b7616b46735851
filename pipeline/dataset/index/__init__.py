"""The entity index: one Parquet row per canonical entity, the columns a hub filters on.

    index/part-NNNNN-of-NNNNN.parquet

A row is made by ``index_row`` — a pure function of the entity (its body, links, provenance and
warnings, as the canonical line holds them) and the one pipeline fact the entity does not carry,
the status of its input's native round trip. ``COLUMNS`` is the one definition of the table: the
Parquet schema (``SCHEMA``), the BigQuery table schema (``bigquery_schema``), the JSON Schema of a
row (docs/schema/index-row.schema.json) and the column table of docs/entity-index.md are all made
from it (``python -m pipeline.dataset.index docs`` writes both; ``make schema`` runs it).

The rows take the path of every other dataset (pipeline/dataset/shards.py): each is a sortable record made
where its entity is made (fused with ``RoundTrip``, or ``Validate`` with ``--fidelity off``), the
records are externally sorted and cut into shards by content, and each sorted shard is then written
as one Parquet file into the run's staging folder, for the commit (pipeline/dataset/commit.py). So the same
inputs give the same files, byte for byte: rows in a fixed order (by a hash of the entity id), row
groups of a fixed number of rows, and no timestamp in the file (Parquet's ``created_by`` names the
pyarrow version only). Unchanged inputs of a ``--since`` run carry their rows from the previous
run's index files, as their canonical lines are carried.

The Parquet files are written with pyarrow through the output's fsspec filesystem rather than with
Beam's file sinks (``apache_beam.io.parquetio``): those write through Beam's own filesystems (no
fsspec stores, no ``--storage-options``), straight to the final folder (past the staged commit),
and assign rows to shards at random — the files would differ from run to run.

The package: ``rows.py`` the columns and the row (``index_row``, made in the normalize stages),
``parquet.py`` the files (``WriteIndex``, ``CarryIndex``, ``read_rows``), ``bigquery.py`` the
``--bigquery-table`` load, ``docs.py`` the published schema and column table.
"""

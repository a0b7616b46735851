"""The dataset a normalize run writes and the export job reads: sorted JSONL shards, the blob store,
the shard record of each dataset, the entity index, the manifest (written last, read by
``--since`` and ``bunzai export``), and the staged commit that publishes them."""

"""Every numeric limit of the model backends, named once."""

from typing import Final

QUERY_CACHE_ENTRIES: Final = 256
"""Question vectors an embedder keeps (models/embedders.RecentQueries): ~0.5 MB at 512
dimensions; a turn asks for its question's vector twice (search, then gaps)."""

QUERY_EMBED_BATCH: Final = 16
"""Questions embedded in one forward pass at most, when turns ask at the same time
(models/embedders.py): measured with USE on 2 cores, 4.7 ms of CPU for one question alone,
1.8 ms each in a batch of 8 and 1.3 ms in a batch of 16."""

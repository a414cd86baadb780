"""SQLite storage (sqlite-utils): catalog, chunk index, conversations, traces."""

from docassist.storage.database import Store
from docassist.storage.indexer import IndexReport, index_paths
from docassist.storage.search import Bm25Retriever

__all__ = ["Bm25Retriever", "IndexReport", "Store", "index_paths"]

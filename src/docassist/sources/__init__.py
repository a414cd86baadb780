"""Document sources: folders and web sites, synced incrementally into the catalog."""

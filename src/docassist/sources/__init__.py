"""Document sources: folders, web sites, Confluence spaces and SharePoint/OneDrive libraries,
synced incrementally into the catalog."""

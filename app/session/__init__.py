"""The editing model, without Qt: selections, history-aware operations (layers, unmix,
repairs, images) and the scripting face (Editor)."""

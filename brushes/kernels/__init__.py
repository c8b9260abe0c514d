"""The brushes' effects: one Kernel a module, each seeing the document as a Surface
(brushes.surface)."""

"""Application layer: joins the generic engines with the FL model (may import ``flmodel``)."""

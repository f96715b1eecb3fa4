"""The slmcode profile: ws_* tools, the match ladder, ws_patch, syntax checks, caps, guards."""

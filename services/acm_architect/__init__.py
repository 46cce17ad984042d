"""Architect: owns agent schemas. Today it gives every new agent the default schema on its first turn
(versioned, stored, announced on the schemas topic); DefineAgent and the archetype library come with
the architect issue."""

GROUP = "architect"

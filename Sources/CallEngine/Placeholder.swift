// The call engine (PROTOCOL.md 3): see CallEngine.swift.

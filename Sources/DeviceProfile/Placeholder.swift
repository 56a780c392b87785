// Device profiles: see Profile.swift.

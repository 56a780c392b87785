import ArgumentParser
import DeviceProfile
import Foundation

/// `ipcemu profile ...`: work with device profiles (device-profiles/*.yaml, docs/profiles.md).
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Work with device profiles.",
        subcommands: [Check.self]
    )

    /// `ipcemu profile check FILE...`: validates each file; exits 1 if any is bad.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate device profiles.",
            discussion: """
                Prints 'FILE: ok (devId ..., category ..., ...)' for a good profile and \
                'FILE:LINE: FIELD: what was expected' (on standard error) for the first mistake in a bad one; \
                a field that does not apply is ignored with 'FILE:LINE: warning: FIELD: ...' on standard error. \
                Exits with status 1 if any file is bad.
                """
        )

        @Argument(help: "Profile files (YAML).")
        var files: [String] = []

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one profile file") }
        }

        func run() throws {
            var bad = 0
            for file in files {
                do {
                    let profile = try DeviceProfile.load(path: file)
                    for warning in profile.warnings {
                        FileHandle.standardError.write(Data((warning.description + "\n").utf8))
                    }
                    print("\(file): ok (\(profile.summary))")
                } catch {
                    bad += 1
                    FileHandle.standardError.write(Data((error.description + "\n").utf8))
                }
            }
            if bad > 0 { throw ExitCode(1) }
        }
    }
}

import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` (the commit the binary is built from, for `rivulet --version`) before
/// each build; the file changes only when the commit does, so nothing is rebuilt for it otherwise.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let script = """
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null | head -c 1)" ]; then
              commit="$commit-modified"
            fi
            mkdir -p "$2"
            text="/// The commit this binary was built from (from the build, by the BuildInfo plugin).
            let buildCommit = \\"$commit\\""
            if [ "$(cat "$2/BuildInfo.swift" 2>/dev/null)" != "$text" ]; then printf '%s\\n' "$text" > "$2/BuildInfo.swift"; fi
            """
        return [
            .prebuildCommand(
                displayName: "Recording the commit for --version",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}

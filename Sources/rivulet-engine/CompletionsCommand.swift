import ArgumentParser

/// `rivulet completions bash|zsh|fish`: the shell completion script, to source or install.
struct CompletionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Print the completion script for bash, zsh or fish.",
        discussion: """
            bash: rivulet completions bash > ~/.local/share/bash-completion/completions/rivulet
            zsh:  rivulet completions zsh > "${fpath[1]}/_rivulet"
            fish: rivulet completions fish > ~/.config/fish/completions/rivulet.fish
            """)

    enum Shell: String, ExpressibleByArgument, CaseIterable {
        case bash, zsh, fish
    }

    @Argument(help: "bash, zsh or fish.")
    var shell: Shell

    func run() throws {
        let script = Rivulet.completionScript(for: CompletionShell(rawValue: shell.rawValue) ?? .bash)
        FileHandleOutput.standardOutput.write(script.hasSuffix("\n") ? script : script + "\n")
    }
}

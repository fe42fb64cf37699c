@preconcurrency import Glibc

/// Finds the subcommand, handles `--help`, parses options, and runs it.
struct CommandLineTool {
    let commands: [any Command]

    func main(arguments: [String], environment: [String: String]) async -> Int32 {
        guard let first = arguments.first else {
            Self.printError("missing command; see 'callpush --help'")
            return ExitStatus.usage
        }
        if ["--help", "-h", "help"].contains(first) {
            if first == "help", arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
                print(command.help, terminator: "")
            } else {
                print(overview, terminator: "")
            }
            return ExitStatus.success
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            Self.printError("unknown command '\(first)'; see 'callpush --help'")
            return ExitStatus.usage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(command.help, terminator: "")
            return ExitStatus.success
        }
        let parser = OptionParser(
            command: command.name, specs: command.options, readsEnvironment: command.readsEnvironment,
            maximumPositional: command.maximumPositional
        )
        switch parser.parse(rest, environment: environment) {
        case .failure(let failure):
            for problem in failure.problems { Self.printError(problem) }
            Self.printError("see 'callpush \(command.name) --help'")
            return ExitStatus.usage
        case .success(let options):
            return await command.run(options)
        }
    }

    var overview: String {
        let width = (commands.map(\.name.count).max() ?? 0) + 2
        var text = """
            callpush: call events from Kafka to APNs, so phones ring for incoming calls and stop when the caller hangs up.

            Usage: callpush <command> [options]

            Commands:

            """
        for command in commands {
            text += "  \(command.name)\(String(repeating: " ", count: width - command.name.count))\(command.summary)\n"
        }
        text += "\nRun 'callpush <command> --help' for a command's options and examples.\n"
        return text
    }

    static func printError(_ message: String) {
        var line = "callpush: \(message)\n"
        line.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    }
}

import EmbeddedPipeline
import Foundation

// Before any thread starts: glibc fixes the arena limit when the process first needs more arenas.
let mallocArenas = MallocArenaLimit.apply(
    environment: ProcessInfo.processInfo.environment, command: CommandLine.arguments.dropFirst().first)
let tool = CommandLineTool(commands: [
    DemoCommand(),
    RunCommand(),
    SendCommand(),
    ProduceCommand(),
    MockAPNsCommand(),
    KafkaMockCommand(),
])
let status = await tool.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(status)

import Foundation

let tool = CommandLineTool(commands: [
    ProduceCommand(),
    KafkaMockCommand(),
    RunCommand(),
    SendCommand(),
    DemoCommand(),
    MockAPNsCommand(),
])
let status = await tool.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(status)

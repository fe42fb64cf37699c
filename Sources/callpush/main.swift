import Foundation

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

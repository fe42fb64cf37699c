import Foundation
import Testing

@Suite struct HelpTests {
    @Test func overviewListsEveryCommand() throws {
        let result = try CallpushProcess.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Usage: callpush <command> [options]"))
    }

    @Test func unknownCommandIsOneLineWithAPointer() throws {
        let result = try CallpushProcess.run(["frobnicate"])
        #expect(result.status == 64)
        #expect(result.stderr == "callpush: unknown command 'frobnicate'; see 'callpush --help'\n")
    }

    @Test func missingCommandIsRefused() throws {
        let result = try CallpushProcess.run([])
        #expect(result.status == 64)
        #expect(result.stderr.contains("see 'callpush --help'"))
    }
}

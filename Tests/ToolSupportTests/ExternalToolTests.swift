import Foundation
import Testing
import ToolSupport

@Suite struct ExternalToolTests {
    @Test func anInstalledToolIsFoundOnPath() throws {
        let path = try #require(ExternalTool.path("sh"))
        #expect(path.hasSuffix("/sh"))
        #expect(FileManager.default.isExecutableFile(atPath: path))
        #expect(ExternalTool.isInstalled("sh"))
        #expect(ExternalTool.path("/bin/sh") == "/bin/sh", "a path is itself")
        #expect(try ExternalTool.locate(["sh", "cat"]) == ["sh": path, "cat": try #require(ExternalTool.path("cat"))])
    }

    @Test func aMissingToolIsNamedInTheError() throws {
        #expect(ExternalTool.path("callpush-no-such-tool") == nil)
        #expect(!ExternalTool.isInstalled("callpush-no-such-tool"))
        let error = try #require(throws: MissingToolError.self) {
            try ExternalTool.locate(["sh", "callpush-no-such-tool", "callpush-no-such-tool-either"])
        }
        #expect(error.names == ["callpush-no-such-tool", "callpush-no-such-tool-either"])
        #expect(error.description == "callpush-no-such-tool, callpush-no-such-tool-either not installed "
            + "(looked on PATH and in /usr/bin, /usr/sbin, /usr/local/bin)")
    }

    @Test func runGivesTheStatusAndBothOutputs() throws {
        let (status, output) = try ExternalTool.run(["sh", "-c", "echo out; echo err >&2; exit 4"])
        #expect(status == 4)
        #expect(output == "out\nerr\n")
        let missing = try ExternalTool.run(["callpush-no-such-tool"])
        #expect(missing.status == 127, "env: \(missing.output)")
    }
}

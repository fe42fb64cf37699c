import Foundation

/// Runs a command with a hard time limit; for checking our output with independent tools (openssl, python3).
enum Subprocess {
    struct Result {
        let status: Int32
        let output: String
    }

    static func run(_ arguments: [String], input: String? = nil, timeoutSeconds: Double = 20) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let outputPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = outputPipe
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try inputPipe.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return Result(status: -1, output: "timed out")
        }
        let data = outputPipe.fileHandleForReading.readDataToEndOfFile()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "callpush-crypto-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

// A client process for multi-process tests: it waits on standard input for
// "go", so that the test can release several processes at the same moment,
// then runs one task and reports through its exit code and standard output.
import FolderSync
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

/// Parses `--name value` pairs.
func parseOptions(_ arguments: ArraySlice<String>) -> [String: String] {
    var arguments = arguments
    var options: [String: String] = [:]
    while let flag = arguments.popFirst() {
        guard flag.hasPrefix("--"), let value = arguments.popFirst() else { fail("bad argument \(flag)") }
        options[String(flag.dropFirst(2))] = value
    }
    return options
}

let command = CommandLine.arguments.dropFirst().first ?? ""
let options = parseOptions(CommandLine.arguments.dropFirst(2))
@Sendable func option(_ name: String) -> String {
    guard let value = options[name] else { fail("missing --\(name)") }
    return value
}

switch command {
case "register":
    let remote = FileManagerFileSystem(rootURL: URL(fileURLWithPath: option("root")))
    let app = ApplicationSyncManager(remote: remote)
    let configuration = ApplicationSyncManager.Configuration(
        applicationIdentifier: options["app"] ?? "com.example.race", clientIdentifier: option("client"), clientDescription: "worker")
    _ = readLine()
    do {
        try await app.register(configuration)
        let document = try await DocumentSyncManager(
            applicationSyncManager: app,
            registering: .init(documentIdentifier: option("document"), documentDescription: "race",
                               helperDirectory: URL(fileURLWithPath: option("helper"))),
            remoteDocumentCreationHandler: { _ in true })
        print(document.integrityKey ?? "")
    } catch {
        fail("\(error)")
    }
default:
    fail("unknown command \(command)")
}

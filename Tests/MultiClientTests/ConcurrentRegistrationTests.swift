import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("Concurrent registration")
struct ConcurrentRegistrationTests {
    @Test("Two processes registering the same new document at the same moment end with one integrity key, 50 times")
    func twoProcessesRace() async throws {
        for round in 1...50 {
            let temporary = TemporaryDirectory()
            let root = temporary.subdirectory("remote")
            let document = "DDDDDDDD-0000-4000-8000-\(String(format: "%012d", round))"
            let workers = try ["A", "B"].map { client in
                try ChildProcess(
                    "foldersync-test-worker",
                    [
                        "register", "--root", root.path, "--client", "client-\(client)", "--document", document,
                        "--helper", temporary.subdirectory("helper-\(client)").path,
                    ])
            }
            for worker in workers { worker.send("go") }
            var keys: [String] = []
            for worker in workers {
                let result = await worker.finish()
                #expect(result.status == 0, "round \(round): \(result.errors)")
                keys.append(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let layout = try RemoteLayout(applicationIdentifier: "com.example.race")
            let keyFiles = try FileManager.default.contentsOfDirectory(
                atPath: root.appendingPathComponent(layout.integrityKeyDirectory(document).description).path)
            #expect(keyFiles.count == 1, "round \(round): integrity keys \(keyFiles)")
            #expect(
                keys[0] == keys[1] && [keys[0]] == keyFiles,
                "round \(round): workers saw \(keys), remote has \(keyFiles)")
            for client in ["client-A", "client-B"] {
                #expect(
                    FileManager.default.fileExists(
                        atPath: root.appendingPathComponent(layout.deviceInfoFile(client).description).path))
            }
            let leftovers = treeListing(of: root).filter { $0.contains(TemporaryName.prefix) }
            #expect(leftovers.isEmpty, "round \(round): temporaries left behind: \(leftovers)")
        }
    }
}

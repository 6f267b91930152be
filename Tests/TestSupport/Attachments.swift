import Foundation

/// Deterministic bytes (splitmix64): incompressible, reproducible.
func pseudoRandomBytes(_ count: Int, seed: UInt64) -> Data {
    var state = seed
    var data = Data(capacity: count + 8)
    while data.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        withUnsafeBytes(of: z ^ (z >> 31)) { data.append(contentsOf: $0) }
    }
    return data.prefix(count)
}

/// The attachment files on a file-manager remote, by name, with their sizes.
func remoteAttachments(_ root: URL) throws -> [String: Int] {
    let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/Attachments")
    guard FileManager.default.fileExists(atPath: folder.path) else { return [:] }
    var found: [String: Int] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
        found[name] =
            try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)[.size] as? Int
    }
    return found
}

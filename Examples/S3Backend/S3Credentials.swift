public import Foundation

/// An access key for S3 request signing. Its description never shows the secret.
public struct S3Credentials: Sendable, CustomStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String

    public init(accessKeyID: String, secretAccessKey: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    /// From `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, or `nil` when either is missing.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        -> S3Credentials?
    {
        guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else { return nil }
        return S3Credentials(accessKeyID: id, secretAccessKey: secret)
    }

    public var description: String { "S3Credentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>)" }
}

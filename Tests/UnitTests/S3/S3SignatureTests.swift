import Foundation
import Testing

@testable import S3Backend
@testable import TestSupport

/// AWS Signature Version 4 against the worked example in AWS's S3 documentation ("GET Object", example credentials).
@Suite("S3 request signing")
struct S3SignatureTests {
    @Test("The GET Object example of AWS's documentation signs to its published signature")
    func awsExample() throws {
        let signer = SignatureV4(
            credentials: S3Credentials(
                accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1")
        let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
        let headers = signer.authorization(
            method: "GET", host: "examplebucket.s3.amazonaws.com", encodedPath: "/test.txt",
            query: [], headers: ["Range": "bytes=0-9"],
            payloadHash: SignatureV4.payloadHash(Data()), date: date)
        #expect(headers["x-amz-date"] == "20130524T000000Z")
        #expect(
            headers["Authorization"]
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test("Keys and query values are encoded as S3 signs them: unreserved characters kept, every other byte escaped")
    func encoding() {
        #expect(SignatureV4.uriEncode("a b/é 🎉+~", keepingSlash: true) == "a%20b/%C3%A9%20%F0%9F%8E%89%2B~")
        #expect(SignatureV4.uriEncode("a/b") == "a%2Fb")
        #expect(
            SignatureV4.canonicalQuery([("prefix", "x/y"), ("list-type", "2"), ("delete", "")])
                == "delete=&list-type=2&prefix=x%2Fy")
    }

    @Test("Credentials never show their secret")
    func redacted() {
        let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "very-secret")
        #expect(!String(describing: credentials).contains("very-secret"))
        #expect(!String(reflecting: credentials).contains("very-secret"))
    }
}

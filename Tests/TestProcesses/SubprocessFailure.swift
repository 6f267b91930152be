/// A child process that could not be started or written to.
package struct SubprocessFailure: Error, CustomStringConvertible {
    package let description: String
}

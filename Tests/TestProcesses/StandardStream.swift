extension Subprocess {
    /// What a child's standard input, output or error is connected to.
    package enum StandardStream: Sendable {
        /// A pipe to or from this process, read and written through the ``Subprocess``.
        case pipe
        /// `/dev/null`.
        case null
        /// This process's own.
        case inherit
        /// For standard error only: the same as standard output, as `2>&1` in a shell.
        case sameAsOutput
    }
}

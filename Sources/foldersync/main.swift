import ArgumentParser
@_spi(Tooling) import FolderSync
import Foundation

/// Runs the command and maps every outcome to the documented exit codes
/// (ArgumentParser's own usage code, 64, becomes 2).
func runFoldersync() async -> Int32 {
    do {
        var command = try Foldersync.parseAsRoot()
        if var asyncCommand = command as? any AsyncParsableCommand {
            try await asyncCommand.run()
        } else {
            try command.run()
        }
        return ToolExit.success
    } catch let exit as ExitCode {
        return exit.rawValue
    } catch let failure as ToolFailure {
        printError(failure.message)
        return failure.exitCode
    } catch let error as FolderSyncError {
        printError(error.description)
        return ToolExit.couldNotCheck
    } catch {
        if Foldersync.exitCode(for: error) == .success {
            print(Foldersync.fullMessage(for: error))  // --help, help
            return ToolExit.success
        }
        let message = Foldersync.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        printError(message.replacingOccurrences(of: "Error: ", with: "") + " (see 'foldersync help')")
        return ToolExit.couldNotCheck
    }
}

exit(await runFoldersync())

import Foundation
import TestProcesses

/// A document's creation killed at every step: on a new folder, the first client's registration (which creates the
/// application's tree, then the document) dies at its first remote request, then on another new folder at its second,
/// and so on until one runs to its end. After each kill the creator comes back and a second client joins; both
/// write and sync, settle, and the torture's checks hold on that folder: no committed write lost, equal replicas,
/// `foldersync doctor` healthy. A creation stopped at any step must leave a document every device can use.
extension Torture {
    struct CreationKills {
        var kills = 0
        var byPoint: [String: Int] = [:]
        var errors: [String] = []
        var lost = 0, phantoms = 0, divergent = 0, unhealthy = 0
    }

    func killCreationAtEveryStep() throws -> CreationKills {
        var result = CreationKills()
        for step in 0... {
            guard step < 200 else { throw TortureFailure("a creation passed more than 200 kill points without ending") }
            let scene = Torture(
                kills: 0, clients: 2, seed: seed, directory: directory.appendingPathComponent("creation-\(step)"))
            try FileManager.default.createDirectory(at: scene.root, withIntermediateDirectories: true)
            let started = try scene.start(
                scene.names[0], seed: seed &+ UInt64(step), killAfter: step, steps: 0, settle: false)
            let creator = scene.finish(started)
            let label = "creation killed at step \(step + 1)"
            if let point = creator.killed {
                result.kills += 1
                result.byPoint[point, default: 0] += 1
            } else if let error = creator.error {
                result.errors.append("\(label): creator: \(error)")
            }
            // The creator comes back, and a second client joins at the same time; both write and sync.
            let clients = try scene.names.enumerated().map { index, name in
                try scene.start(name, seed: seed &+ UInt64(step * 2 + index), killAfter: nil, steps: 6, settle: false)
            }
            for (name, outcome) in zip(scene.names, clients.map(scene.finish)) where outcome.error != nil {
                result.errors.append("\(label): \(name): \(outcome.error!)")
            }
            for _ in 0..<2 {
                for name in scene.names {
                    if let error = scene.finish(try scene.start(name, seed: 0, killAfter: nil, steps: 1, settle: true))
                        .error
                    {
                        result.errors.append("\(label): settle \(name): \(error)")
                    }
                }
            }
            let check = try scene.verify()
            result.lost += check.lost.count
            result.phantoms += check.phantoms.count
            result.divergent += check.divergent
            result.errors += (check.lost + check.phantoms).map { "\(label): \($0)" }
            let doctor = scene.runDoctor()
            if !doctor.healthy {
                result.unhealthy += 1
                result.errors.append("\(label): doctor: \(doctor.output)")
            }
            if creator.killed == nil { break }  // this creation ran to its end: every step before it was killed
        }
        return result
    }
}

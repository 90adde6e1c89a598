#!/usr/bin/env python3
"""A mutation sweep: would a test notice if a behaviour were gone?

Each mutant changes one token of one line (a comparison turned around, `&&` for `||`,
`true` for `false`, `first` for `last`, a line that counts or appends left out) of the
evaluator and the lane's core (`--scope decisions`, the default) or of what reads a
client's input (`--scope input`: topics, payloads, commands, fences, HTTP requests) or
of the shell that keeps their guarantees (`--scope guarantees`: the state store and its
outbox, the publisher, the lane's shell, reconnects, pacing and the scheduler). For
each, in a copy of HEAD of its own, the tests are built and the quick tests run (every
suite without `.waiting`, about 1 200 tests in seconds); a mutant they do not kill is run
against the whole suite with --full. A mutant of an `@inlinable` body has every other
module built again, which inlined the old body. What no test kills is either an
equivalent mutant (the same behaviour, as a sort by `<=` of distinct keys, or a fast path
that falls back to the slow one) or a behaviour no test names: look at each.

Usage: scripts/mutation-sweep [--scope decisions|input|guarantees] [--count N] [--seed S] [--skip N]
                              [--drawn-at COMMIT] [--only FILE] [--full]
Prints a line for each mutant (where, what, the verdict and the failing tests), then a
summary. The copy is a git worktree in .build/mutation-sweep, kept between runs so that
its build is incremental; the working tree of the repository is never touched. The
output of a whole-suite run that killed a mutant is kept in .build/mutation-sweep-logs,
to tell a kill from a test that failed for another reason.
"""
import argparse
import functools
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COPY = os.path.join(ROOT, '.build', 'mutation-sweep')
# The output of each whole-suite run that killed a mutant.
LOGS = os.path.join(ROOT, '.build', 'mutation-sweep-logs')

# The files each scope mutates. `decisions`: the evaluator's and the lane core's.
# `input`: what reads what a client sends, which may be anything (a tracker's topic and
# payload, a command, a fence in a command or a file, an HTTP request to the console).
# `guarantees`: the shell that keeps the promises around them (a state committed before
# the messages it causes are published, nothing published twice, a file replaced whole,
# one process a state directory, reconnects and pacing, the scheduler's clock), most of
# whose tests start a broker or a process and so run only in the whole suite.
SCOPES = {
    'decisions': [
        'Sources/GeotifyCore/Evaluator.swift', 'Sources/GeotifyCore/FixAcceptance.swift',
        'Sources/GeotifyCore/TransitionRules.swift', 'Sources/GeotifyCore/DeviceState.swift',
        'Sources/GeotifyBridge/LaneCore.swift', 'Sources/GeotifyBridge/LaneCore+Commands.swift',
        'Sources/GeotifyBridge/LaneCore+LiveUpdates.swift', 'Sources/GeotifyBridge/LaneCore+RemovedFences.swift',
        'Sources/GeotifyBridge/LaneCore+Sweep.swift', 'Sources/GeotifyBridge/Occupancy.swift',
        'Sources/GeotifyBridge/OwnTracksTransition.swift', 'Sources/GeotifyBridge/PresenceMessages.swift',
        'Sources/GeotifyBridge/OutboundMessages.swift', 'Sources/GeotifyBridge/PreviewBook.swift',
        'Sources/GeotifyBridge/DeviceAdmission.swift', 'Sources/GeotifyBridge/RetainedSweep.swift',
        'Sources/GeotifyBridge/HeldDeliveries.swift', 'Sources/GeotifyBridge/FenceWriteBudget.swift',
        'Sources/GeotifyBridge/LogBudget.swift', 'Sources/GeotifyBridge/Command.swift',
    ],
    'input': [
        'Sources/GeotifyBridge/LocationDecoder.swift', 'Sources/GeotifyBridge/MessageRouter.swift',
        'Sources/GeotifyBridge/DeviceTopic.swift', 'Sources/GeotifyBridge/CommandRequest.swift',
        'Sources/GeotifyBridge/OwnTracksWaypoints.swift', 'Sources/GeotifyBridge/OwnTracksDecryption.swift',
        'Sources/GeotifyJSON/JSONParser.swift', 'Sources/GeotifyJSON/FlatObjectScan.swift',
        'Sources/GeotifyJSON/JSONNumberText.swift', 'Sources/GeotifyJSON/ByteOrderMark.swift',
        'Sources/GeotifyStore/FenceCodec.swift', 'Sources/GeotifyStore/JSONField.swift',
        'Sources/GeotifyCore/Identifier.swift', 'Sources/GeotifyCore/ForbiddenCharacter.swift',
        'Sources/GeotifyCore/InvisibleFormatCharacter.swift', 'Sources/GeotifyCore/TopicLevels.swift',
        'Sources/GeotifyCore/Polygon.swift', 'Sources/GeotifyCore/PolygonEdges.swift',
        'Sources/GeotifyHTTP/HostHeader.swift', 'Sources/GeotifyHTTP/PercentDecoding.swift',
        'Sources/GeotifyHTTP/BasePath.swift', 'Sources/GeotifyHTTP/BasicCredentials.swift',
        'Sources/GeotifyHTTP/Authenticator.swift', 'Sources/GeotifyHTTP/RequestLimits.swift',
        'Sources/GeotifyHTTP/Route.swift', 'Sources/GeotifyHTTP/HeldBody.swift',
    ],
    'guarantees': [
        'Sources/GeotifyStore/StateStore.swift', 'Sources/GeotifyStore/Database.swift', 'Sources/GeotifyStore/OutboxBatch.swift',
        'Sources/GeotifyStore/OutboxWatermark.swift', 'Sources/GeotifyStore/DeliveryQueue.swift',
        'Sources/GeotifyStore/DeliveryBound.swift', 'Sources/GeotifyStore/DeliveryLog.swift',
        'Sources/GeotifyStore/AtomicFile.swift', 'Sources/GeotifyStore/StateDirectoryLock.swift',
        'Sources/GeotifyStore/LogCheckpointer.swift', 'Sources/GeotifyBridge/Publisher.swift',
        'Sources/GeotifyBridge/Lane.swift', 'Sources/GeotifyBridge/Housekeeper.swift',
        'Sources/GeotifyMQTT/ReconnectBackoff.swift', 'Sources/GeotifyMQTT/BurstPacing.swift',
        'Sources/GeotifyMQTT/AcknowledgementPacing.swift', 'Sources/GeotifyMQTT/SessionTakeover.swift',
        'Sources/GeotifyTime/ManualScheduler.swift', 'Sources/GeotifyTime/SystemScheduler.swift',
        'Sources/GeotifyTime/ScheduledWork.swift',
    ],
}


def quick_tests():
    """The tests each mutant meets first, as a `--skip` pattern: every test but those that
    wait for other processes, which carry `.waiting` or `.longWaiting` on their suite or
    themselves (docs/testing.md). About 1 210 tests in 6 s; a new test joins by not
    carrying the trait."""
    waiting = []
    tests = os.path.join(ROOT, 'Tests')
    for module in sorted(os.listdir(tests)):
        folder = os.path.join(tests, module)
        if not module.endswith('Tests') or not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith('.swift'):
                continue
            with open(os.path.join(folder, name)) as file:
                text = file.read()
            waiting += [f'{module}\\.{match.group(2)}/' for match in SUITE.finditer(text)
                        if WAITING.search(match.group(1) or '')]
            waiting += [f'/{match.group(2)}\\(' for match in TEST.finditer(text) if WAITING.search(match.group(1))]
    if not waiting:
        sys.exit('no test with .waiting found under Tests: has the trait been renamed?')
    return '|'.join(waiting)


SUITE = re.compile(r'@Suite\b(\([^\n]*\))?\s*(?:(?:private|fileprivate|package|final)\s+)*(?:struct|class|enum)\s+(\w+)')
TEST = re.compile(r'@Test\(([^\n]*)\)\s*func\s+(\w+)')
WAITING = re.compile(r'\.(waiting|longWaiting)\b')

# One-token replacements, tried at every place they match outside comments and strings.
SWAPS = [
    (' <= ', ' < '), (' < ', ' <= '), (' >= ', ' > '), (' > ', ' >= '), (' == ', ' != '), (' != ', ' == '),
    (' && ', ' || '), (' || ', ' && '), ('true', 'false'), ('false', 'true'), ('if !', 'if '),
    ('guard !', 'guard '), ('min(', 'max('), ('max(', 'min('), (' += 1', ' += 0'), (' - 1', ' + 1'),
    (' + 1', ' - 1'), ('.first', '.last'), ('.last', '.first'),
]
# A line that counts or appends, left out whole (a single-line statement only).
DELETABLE = re.compile(r'^\s*[A-Za-z_][\w.\[\]]*\s*(\+=|-=|\.append\(|\.insert\(|\.remove)')


def code_of(line):
    """The line before any comment, with the insides of string literals blanked."""
    out, in_string = [], False
    for at, character in enumerate(line):
        if not in_string and line.startswith('//', at):
            break
        if character == '"':
            in_string = not in_string
        out.append('\0' if in_string and character != '"' else character)
    return ''.join(out)


@functools.cache
def source(path, commit=None):
    """The text of `path` as the working tree has it, or as it was at `commit` ('' where
    the file did not exist yet); read once a run (the sweep mutates its copy, never the
    working tree)."""
    if commit is None:
        with open(os.path.join(ROOT, path)) as file:
            return file.read()
    shown = subprocess.run(['git', 'show', f'{commit}:{path}'], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    return shown.stdout if shown.returncode == 0 else ''


def mutants(files, commit=None):
    """Every mutant of `files` (as they were at `commit`, if one is given), as (path, line
    index, column, old, new)."""
    found = []
    for path in files:
        lines = source(path, commit).split('\n')
        for number, line in enumerate(lines):
            code = code_of(line)
            stripped = code.strip()
            if not stripped or stripped.startswith(('import', 'assert', 'precondition', 'dispatchPrecondition')):
                continue
            for old, new in SWAPS:
                at = code.find(old)
                while at >= 0:
                    word = old in ('true', 'false')
                    if not word or not (code[at - 1:at].isalnum() or code[at + len(old):at + len(old) + 1].isalnum()):
                        found.append((path, number, at, old, new))
                    at = code.find(old, at + 1)
            balanced = code.count('(') == code.count(')') and code.count('[') == code.count(']')
            if DELETABLE.match(code) and balanced and '{' not in code and not code.rstrip().endswith((',', '(')):
                found.append((path, number, 0, None, None))
    return found


def scope_at(scope, commit):
    """The files `scope` named at `commit` (this script's SCOPES as it was then)."""
    script = source('scripts/mutation_sweep.py', commit)
    namespace = {'__name__': 'drawn', '__file__': os.path.abspath(__file__)}
    exec(script, namespace)
    if scope not in namespace.get('SCOPES', {}):
        sys.exit(f'--drawn-at: scripts/mutation_sweep.py at {commit} has no {scope} scope'
                 + ('' if script else ' (the tool was not committed yet: draw with a new seed)'))
    return namespace['SCOPES'][scope]


def found_again(drawn, commit):
    """The mutants drawn from the sources at `commit`, each moved to where its line is
    now (the same text, the nearest such line to where it was), and those whose line
    has changed or gone."""
    now, moved, gone = {}, [], []
    for path, number, column, old, new in drawn:
        was = source(path, commit).split('\n')[number]
        lines = now.setdefault(path, source(path).split('\n'))
        same = [at for at, line in enumerate(lines) if line == was]
        if same:
            moved.append((path, min(same, key=lambda at: abs(at - number)), column, old, new))
        else:
            gone.append(f'{path}:{number + 1}  {was.strip()}')
    return moved, gone


def indentation(line):
    return len(line) - len(line.lstrip())


def in_inlinable_body(lines, number):
    """Whether line `number` lies in the body of an `@inlinable` declaration: the modules
    that call it compiled the old body into themselves, and an incremental build
    recompiles only the module the file is in (docs/testing.md)."""
    depth = indentation(lines[number])
    for above in range(number - 1, -1, -1):
        line = lines[above]
        if not line.strip() or indentation(line) >= depth:
            continue
        depth = indentation(line)
        words = line.split()
        if any(word in ('struct', 'class', 'enum', 'extension', 'protocol', 'actor') for word in words[:3]):
            return False
        if any(word in ('func', 'var', 'init', 'init(', 'subscript') or word.startswith(('init(', 'subscript('))
               for word in words[:4]):
            return above > 0 and lines[above - 1].strip().startswith('@inlinable')
    return False


def touch_dependents(path):
    """Marks every Swift file outside `path`'s module (the other modules' sources and
    all the tests) as changed, so the next build compiles them again."""
    module = os.path.join(ROOT, 'Sources', path.split('/')[1])
    for top in ('Sources', 'Tests'):
        for folder, _, names in os.walk(os.path.join(COPY, top)):
            inside = os.path.join(ROOT, os.path.relpath(folder, COPY))
            if inside == module or inside.startswith(module + os.sep):
                continue
            for name in names:
                if name.endswith('.swift'):
                    os.utime(os.path.join(folder, name))


def descendants(pid):
    """The processes under `pid`, from /proc (`swift test` starts the test binary in a
    process group of its own, so killing the group of `swift test` misses it)."""
    children = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/stat') as stat:
                    parent = int(stat.read().rsplit(')', 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, waiting = [], [pid]
    while waiting:
        for child in children.get(waiting.pop(), []):
            found.append(child)
            waiting.append(child)
    return found


def run(command, timeout, environment=None):
    """Runs `command` in the copy; a timeout kills it and every process under it (a
    mutant that loops must not leave a test process spinning)."""
    process = subprocess.Popen(
        command, cwd=COPY, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace',
        env=environment)
    try:
        output, _ = process.communicate(timeout=timeout)
        return process.returncode, output
    except subprocess.TimeoutExpired:
        for pid in [process.pid] + descendants(process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        output, _ = process.communicate()
        return None, output


def left_behind(scratch):
    """Kills what a test process that crashed left running (the brokers and bridges it
    had started, whose stop never ran): every process that inherited `TMPDIR=scratch`,
    the run's own scratch directory, whatever its command line says."""
    marker = b'TMPDIR=' + scratch.encode() + b'\0'
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/environ', 'rb') as file:
                    inherited = marker in b'\0' + file.read()
                if inherited:
                    os.kill(int(entry), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass


def test(skip, keep=None):
    """Runs the built tests (all but those `skip` matches, all when None) with their files
    in a scratch directory; returns the verdict. A run that fails leaves its output in
    the file `keep` when one is named."""
    parent = '/dev/shm' if os.path.isdir('/dev/shm') and os.access('/dev/shm', os.W_OK) else None
    scratch = tempfile.mkdtemp(prefix='geotify-mutant.', dir=parent)
    try:
        command = ['swift', 'test', '--skip-build']
        command += ['--skip', skip] if skip else []
        # The whole suite takes about a minute (two under the sweep's own load): a mutant
        # that makes it hang (a publisher that never hands a message over leaves every
        # broker test waiting out its bound) is cut off at ten.
        code, output = run(command, 600 if skip is None else 180, dict(os.environ, TMPDIR=scratch))
    finally:
        left_behind(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    if code == 0:
        return None
    if keep:
        os.makedirs(os.path.dirname(keep), exist_ok=True)
        with open(keep, 'w') as file:
            file.write(output)
    failing = sorted(set(re.findall(r'✘ Test (\w+)\(', output)))
    names = ', '.join(failing[:3]) + (' …' if len(failing) > 3 else '')
    if code is None:
        # Cut off: what had failed by then is the kill's evidence.
        return 'killed (timed out' + ('; failed before it: ' + names if failing else '') + ')'
    return 'killed' + (' by ' + names if failing else ' (crashed)')


def prepare(quick):
    """Makes or updates the copy at HEAD, with the tests' Python packages of the
    repository's own build, and builds its tests."""
    if not os.path.isdir(COPY):
        # A copy removed with .build is still registered: forget it first.
        subprocess.run(['git', 'worktree', 'prune'], cwd=ROOT, check=True)
        subprocess.run(['git', 'worktree', 'add', '--detach', COPY, 'HEAD'], cwd=ROOT, check=True)
    subprocess.run(['git', 'checkout', '--quiet', '--force', '--detach',
                    subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=ROOT, check=True, stdout=subprocess.PIPE,
                                   text=True).stdout.strip()], cwd=COPY, check=True)
    os.makedirs(os.path.join(COPY, '.build'), exist_ok=True)
    python = os.path.join(COPY, '.build', 'python')
    if not os.path.lexists(python):
        os.symlink(os.path.join(ROOT, '.build', 'python'), python)
    print('building the tests of the copy in .build/mutation-sweep', file=sys.stderr, flush=True)
    code, output = run(['swift', 'build', '--build-tests'], 3_600)
    if code != 0:
        sys.exit('the copy does not build:\n' + output[-3_000:])
    if test(quick) is not None:
        sys.exit('the quick tests fail without a mutant: mend that first')


def main():
    parser = argparse.ArgumentParser(description='A mutation sweep over the decision code, the input code or the shell '
                                                 'that keeps their guarantees.')
    parser.add_argument('--scope', choices=sorted(SCOPES), default='decisions',
                        help='which files: the evaluator and the lane core (decisions, the default), what reads '
                             "clients' input (input), or the outbox, the state store, the publisher, the lane's "
                             'shell, reconnects and the scheduler (guarantees)')
    parser.add_argument('--count', type=int, default=100, help='how many mutants to try (default 100)')
    parser.add_argument('--seed', type=int, default=1, help='which mutants: the order they are drawn in')
    parser.add_argument('--skip', type=int, default=0, metavar='N',
                        help='leave out the first N mutants drawn: go on with a sweep that stopped')
    parser.add_argument('--drawn-at', metavar='COMMIT',
                        help='draw as a sweep of COMMIT did (its scope\'s files as they were then), to go on with '
                             '--skip where it stopped on a later HEAD; each mutant is applied to its line as HEAD has '
                             'it (one whose line has changed is named and left out; a file added to the scope since '
                             'is not drawn)')
    parser.add_argument('--only', metavar='FILE', action='append',
                        help="only the scope's files whose path ends with FILE (Database.swift, GeotifyStore/): a "
                             'file new to the scope, or one just changed; may be given again')
    parser.add_argument('--full', action='store_true', help='run the whole suite against each survivor of the quick tests')
    options = parser.parse_args()

    if options.drawn_at and subprocess.run(['git', 'rev-parse', '--quiet', '--verify', f'{options.drawn_at}^{{commit}}'],
                                           cwd=ROOT, stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit(f'--drawn-at: no commit {options.drawn_at}')
    files = scope_at(options.scope, options.drawn_at) if options.drawn_at else SCOPES[options.scope]
    if options.only:
        files = [path for path in files if path.endswith(tuple(options.only))]
        if not files:
            sys.exit(f'no file of the {options.scope} scope ends with ' + ' or '.join(options.only))
    chosen = mutants(files, options.drawn_at)
    random.Random(options.seed).shuffle(chosen)
    chosen = chosen[options.skip:options.skip + options.count]
    if options.drawn_at:
        chosen, gone = found_again(chosen, options.drawn_at)
        for line in gone:
            print(f'left out, its line changed since {options.drawn_at}: {line}', file=sys.stderr, flush=True)
    print(f'{len(chosen)} mutants', file=sys.stderr, flush=True)

    quick = quick_tests()
    prepare(quick)
    tally, survivors = {}, []
    # A stop (Ctrl-C, SIGTERM) still puts the mutated file back (`finally`).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    for drawn, (path, number, column, old, new) in enumerate(chosen, start=options.skip + 1):
        full_path = os.path.join(COPY, path)
        with open(full_path) as file:
            original = file.read()
        lines = original.split('\n')
        line = lines[number]
        if old is None:
            lines[number] = re.sub(r'^(\s*)', r'\1// ', line, count=1)
            what = 'line left out'
        else:
            lines[number] = line[:column] + new + line[column + len(old):]
            what = f'{old.strip()} -> {new.strip()}'
        inlinable = in_inlinable_body(lines, number)
        try:
            with open(full_path, 'w') as file:
                file.write('\n'.join(lines))
            if inlinable:
                touch_dependents(path)
            code, _ = run(['swift', 'build', '--build-tests'], 1_800)
            if code != 0:
                verdict = 'does not compile'
            else:
                verdict = test(quick)
                if verdict is None and options.full:
                    # A test that fails only in the whole suite may fail for another
                    # reason (a wait cut short on a loaded machine): keep what it said.
                    keep = os.path.join(LOGS, f'{options.scope}-seed{options.seed}-{drawn}.log')
                    verdict = test(None, keep)
                    verdict = verdict and verdict + f' (the whole suite only; its output in {os.path.relpath(keep, ROOT)})'
                verdict = verdict or 'SURVIVED'
        finally:
            with open(full_path, 'w') as file:
                file.write(original)
            if inlinable:
                # The others compiled the mutant into themselves: compile them again.
                touch_dependents(path)
        kind = 'survived' if verdict == 'SURVIVED' else 'did not compile' if verdict == 'does not compile' else 'killed'
        tally[kind] = tally.get(kind, 0) + 1
        if kind == 'survived':
            survivors.append(f'{path}:{number + 1}  {what}  {line.strip()}')
        print(f'{path}:{number + 1}\t{what}\t{verdict}\t{line.strip()}', flush=True)
    print('\n' + ', '.join(f'{count} {kind}' for kind, count in sorted(tally.items())))
    for survivor in survivors:
        print('survived: ' + survivor)


if __name__ == '__main__':
    main()

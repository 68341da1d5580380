"""`rdmatool watch`: a long-running, bounded monitor of the fabric's light counters.

Each interval (rdmatool.watch.loop) reads every host's light snapshot (rdmatool.watch.light: the audited script in
its `watch` mode, commands.SNAPSHOT_WATCH, its outputs read at the cost of their values by rdmatool.watch.lines) and,
every few intervals, the switches' counters on the ports facing the hosts (rdmatool.watch.switches); counters become
rates in a fixed-size history (rdmatool.watch.history: recent intervals at full resolution, older ones downsampled),
saved atomically to disk (rdmatool.watch.store) so that a restart resumes. The history is judged over time
(rdmatool.watch.judge: periodic spikes with the capture analysis' period detection, counters that start to grow,
latency that steps up, through the playbooks' watch_* rules), findings go out as JSON lines, the Prometheus textfiles
are rewritten (rdmatool.watch.textfile) and the last window is kept as a bundle (rdmatool.watch.window). With
`--probe latency`, short latency tests between rotating, rail-aligned pairs within a budget per host
(rdmatool.watch.rotation, rdmatool.watch.probe).
"""

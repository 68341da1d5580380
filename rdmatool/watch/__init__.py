"""`rdmatool watch`: a long-running, bounded monitor of the fabric's light counters.

Each interval (rdmatool.watch.loop) reads every host's light snapshot (rdmatool.watch.light: the audited script in
its `watch` mode, commands.SNAPSHOT_WATCH), turns counters into rates and keeps them in a fixed-size history
(rdmatool.watch.history: recent intervals at full resolution, older ones downsampled), saved atomically to disk
(rdmatool.watch.store) so that a restart resumes. The history is judged over time (rdmatool.watch.judge: periodic
spikes with the capture analysis' period detection, counters that start to grow, through the playbooks' watch_*
rules), findings go out as JSON lines, and the Prometheus textfiles are rewritten (rdmatool.watch.textfile).
"""

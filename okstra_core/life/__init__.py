"""The run's life after launch: the lead and workers, runs, status, stop, resume, report,
and the doctor. What it reads from run files is data, never authority."""

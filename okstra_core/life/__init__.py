"""The run's life after launch: the lead (and its workers), runs, status, stop, attach,
resume, the report's role set, and the doctor.

Everything here reads run files that a repository may have planted; what it reads is
data, never authority.
"""

# Sourced by the database app's scripts (setup, start, stop, baseline): where its cluster lives and
# how to run a command as its superuser.
pgdata=/var/lib/postgresql/15/main
pgconf=/etc/postgresql/15/main/postgresql.conf
pgbin=/usr/lib/postgresql/15/bin
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

"""The fairness service's use cases (:mod:`.seeds`: commit, lock, reveal, prove) on domain
types; storage through the ports of :mod:`.ports` only. Its domain is ``rummy_rules.shuffle``
(the seed's size, the shuffle version): the service has no domain room of its own."""

"""``twistd -n class-server``: a semester's class on one service, and ``velhanet-class`` beside it.

Students hand in (an archive from the browser or the API, or a commit of their repository), are graded in
the sandbox through the grading library (``velhanet.grading``), and read their own reports; teachers see
the class. Who may see what is decided once, by ``twisted.cred`` (``auth``): a person signs in with a
personal link or its secret as a bearer token, and every resource asks the avatar it was given.

Roles: ``classfile`` (the class file), ``store`` (people, sessions, hand-ins in ``grades.db``),
``links`` (personal links: made, hashed, revoked), ``auth`` (the portal, the realm, sessions, CSRF, the
sign-in limiter), ``archives`` (an upload checked and unpacked within its limits), ``queue`` (the fair
queue, pure), ``desk`` (a hand-in from received to recorded), ``repositories`` (the git students'
commits), ``league`` (a socha-player class's league), ``pages`` (the HTML), ``resources`` and ``api``
(``twisted.web``), ``events`` (the live updates), ``service`` and ``tap`` (twistd), ``command``
(``velhanet-class``).
"""

"""pk-acls against a cluster: CreateAcls, DescribeAcls and DeleteAcls through confluent-kafka's
AdminClient, failures reported as the Java admin client's exceptions."""

from __future__ import annotations

from pk.engine import acls as A

from ..acls import AclBackend, AclCommandError, Entry, Pattern
from .kafka_admin import ERRORS_PACKAGE, AdminError, KafkaAdmin

# Errors of the ACL APIs kafka_admin's table does not name: (Java class, default text).
_ACL_ERRORS = {
    54: ("SecurityDisabledException", "Security features are disabled."),
    53: ("TransactionalIdAuthorizationException", "Transactional Id authorization failed."),
}


def _failure(exc: AdminError) -> AclCommandError:
    if exc.code in _ACL_ERRORS:
        cls, default = _ACL_ERRORS[exc.code]
        message = exc.message if exc.java_class != ERRORS_PACKAGE + "UnknownServerException" else default
        return AclCommandError(f"{ERRORS_PACKAGE}{cls}: {message}")
    return AclCommandError(exc.execution_message())


class KafkaAcls(AclBackend):
    def __init__(self, admin: KafkaAdmin):
        self.admin = admin

    @staticmethod
    def _enums():
        from confluent_kafka.admin import AclOperation, AclPermissionType, ResourcePatternType, ResourceType

        def of(enum, names):
            def convert(code: int):
                try:
                    return enum(code)
                except ValueError:  # librdkafka knows no DELEGATION_TOKEN/USER resources nor token operations
                    raise AclCommandError(f"{names[code]} is not supported by pk's client (librdkafka) with "
                                          f"--bootstrap-server; use the bundled engine's data directory") from None
            return convert

        return (of(ResourceType, A.RESOURCE_NAMES), of(ResourcePatternType, A.PATTERN_NAMES),
                of(AclOperation, A.OPERATION_NAMES), of(AclPermissionType, A.PERMISSION_NAMES))

    def _binding(self, pattern: Pattern, entry: Entry):
        from confluent_kafka.admin import AclBinding

        rt, pt, op, perm = self._enums()
        return AclBinding(rt(pattern[0]), pattern[1], pt(pattern[2]), entry[0], entry[1], op(entry[2]), perm(entry[3]))

    def _filter(self, f: A.AclFilter):
        from confluent_kafka.admin import AclBindingFilter

        rt, pt, op, perm = self._enums()
        return AclBindingFilter(rt(f.resource_type), f.name, pt(f.pattern_type), f.principal, f.host,
                                op(f.operation), perm(f.permission))

    @staticmethod
    def _pair(b) -> tuple[Pattern, Entry]:
        return ((b.restype.value, b.name, b.resource_pattern_type.value),
                (b.principal, b.host, b.operation.value, b.permission_type.value))

    def describe(self, f: A.AclFilter) -> list[tuple[Pattern, Entry]]:
        client = self.admin.client
        try:
            found = self.admin.result(client.describe_acls(self._filter(f), request_timeout=self.admin.timeout_s),
                                      "describeAcls")
        except AdminError as exc:
            raise _failure(exc) from None
        return [self._pair(b) for b in found]

    def create(self, bindings: list[tuple[Pattern, Entry]]) -> None:
        client = self.admin.client
        try:
            futures = client.create_acls([self._binding(p, e) for p, e in bindings],
                                         request_timeout=self.admin.timeout_s)
            self.admin.results(futures, "createAcls")
        except AdminError as exc:
            raise _failure(exc) from None

    def delete(self, filters: list[A.AclFilter]) -> None:
        client = self.admin.client
        try:
            futures = client.delete_acls([self._filter(f) for f in filters], request_timeout=self.admin.timeout_s)
            self.admin.results(futures, "deleteAcls")
        except AdminError as exc:
            raise _failure(exc) from None

    def close(self) -> None:
        self.admin.close()

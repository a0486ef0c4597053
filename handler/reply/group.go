package reply

import "github.com/popshim/popshim/broker"

// FAQSuffix is broker.FAQSuffix.
const FAQSuffix = broker.FAQSuffix

// GroupNotExistRemark is broker.GroupNotExistRemark.
func GroupNotExistRemark(group string) string { return broker.GroupNotExistRemark(group) }

// GroupNoPermissionRemark is broker.GroupNoPermissionRemark.
func GroupNoPermissionRemark(group string) string { return broker.GroupNoPermissionRemark(group) }
